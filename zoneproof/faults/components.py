"""Faults of the components under test, started by this run (not of the cluster itself)."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import ClassVar

from zoneproof import errors
from zoneproof._util import daemons
from zoneproof.cluster.interface import Capability
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect

__all__ = ["KillControllerLeader", "StopWebhook"]

_SIGNALS = ("SIGKILL", "SIGTERM")


@registry.kind
@dataclass(frozen=True, slots=True)
class KillControllerLeader:
    """Send ``signal_name`` (SIGKILL or SIGTERM) to the replica holding the Lease; revert
    starts it again."""

    name: ClassVar[str] = "kill-controller-leader"
    requires: ClassVar[frozenset[Capability]] = frozenset()
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.CONTROLLER_LEADER_LOST})

    signal_name: str = "SIGKILL"

    def __post_init__(self) -> None:
        if self.signal_name not in _SIGNALS:
            raise errors.ConfigError(f"signal_name must be SIGKILL or SIGTERM, got "
                                     f"{self.signal_name!r}")

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        replicas = context.replicas(self.name)
        holder = replicas.holder()
        if holder not in replicas.identities:
            raise errors.FaultError(f"the controller Lease is held by {holder!r}, not by one of "
                                    f"{replicas.identities}: no leader to kill")
        return (holder,)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        replicas = context.replicas(self.name)
        for identity in targets:
            replicas.signal(identity, signal.Signals[self.signal_name])

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        replicas = context.replicas(self.name)
        for identity in targets:
            if replicas.alive(identity):
                replicas.signal(identity, signal.SIGKILL)
                replicas.wait_exit(identity, 10)
            replicas.start(identity)


@registry.kind
@dataclass(frozen=True, slots=True)
class StopWebhook:
    """SIGKILL the webhook process while it stays registered; revert serves and registers it
    again (a new port and CA)."""

    name: ClassVar[str] = "stop-webhook"
    requires: ClassVar[frozenset[Capability]] = frozenset()
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WEBHOOK_DOWN})

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        webhook = context.running_webhook(self.name)
        if webhook.record is None:
            raise errors.FaultError("the webhook under test runs elsewhere (a URL): zoneproof "
                                    "cannot stop it")
        return (webhook.url,)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        webhook = context.running_webhook(self.name)
        assert webhook.record is not None
        daemons.send(webhook.record, signal.SIGKILL)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        webhook = context.running_webhook(self.name)
        if webhook.record is not None:  # a killed multi-threaded server may still be exiting:
            daemons.stop(webhook.record, sig=signal.SIGKILL)  # gone before it is served again
        webhook.stop()  # unregister first: start() probes admission without the webhook
        webhook.start()
