"""Faults of the components under test, started by this run (not of the cluster itself)."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

from zoneproof import errors
from zoneproof._util import daemons
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness.controller import ControllerReplicas
from zoneproof.components.harness.webhook import RunningWebhook

__all__ = ["KillControllerLeader", "StopWebhook"]

_LEADER_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True, eq=False)
class KillControllerLeader:
    """Send ``sig`` to the replica holding the Lease; revert starts it again."""

    replicas: ControllerReplicas
    sig: signal.Signals = signal.SIGKILL
    name: str = "kill-controller-leader"
    requires: frozenset[Capability] = field(default=frozenset())

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        holder = self.replicas.holder()
        if holder not in self.replicas.identities:
            raise errors.FaultError(f"the controller Lease is held by {holder!r}, not by one of "
                                    f"{self.replicas.identities}: no leader to kill")
        return (holder,)

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for identity in targets:
            self.replicas.signal(identity, self.sig)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for identity in targets:
            if self.replicas.alive(identity):
                self.replicas.signal(identity, signal.SIGKILL)
                self.replicas.wait_exit(identity, 10)
            self.replicas.start(identity)


@dataclass(frozen=True, slots=True, eq=False)
class StopWebhook:
    """SIGKILL the webhook process while it stays registered; revert serves and registers it
    again (a new port and CA)."""

    webhook: RunningWebhook
    name: str = "stop-webhook"
    requires: frozenset[Capability] = field(default=frozenset())

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        if self.webhook.record is None:
            raise errors.FaultError("the webhook under test runs elsewhere (a URL): zoneproof "
                                    "cannot stop it")
        return (self.webhook.url,)

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        assert self.webhook.record is not None
        daemons.send(self.webhook.record, signal.SIGKILL)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        if self.webhook.record is not None and daemons.alive(self.webhook.record):
            return
        self.webhook.stop()  # unregister first: start() probes admission without the webhook
        self.webhook.start()
