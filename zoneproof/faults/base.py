"""The fault contract, what a fault may act on, and the record of one injection."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, cast

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness.controller import ControllerReplicas
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.webhook import RunningWebhook
from zoneproof.faults.effects import Effect

__all__ = ["Fault", "FaultContext", "FaultRecord", "NodeScheduling"]


class NodeScheduling(Protocol):
    """Cordon, uncordon and drain Nodes through the API, like ``kubectl drain``.

    Implemented over chaostoolkit-kubernetes by ``zoneproof.chaos.k8s.NodeScheduling``:
    the fault library stays free of chaostoolkit and the eviction logic is not re-written.
    """

    def cordon(self, label_selector: str) -> list[str]:
        """Mark the Nodes matching ``label_selector`` unschedulable; their names."""

    def uncordon(self, label_selector: str) -> list[str]:
        """Mark them schedulable again; their names."""

    def drain(self, label_selector: str, *, timeout_s: float) -> list[str]:
        """Cordon them and evict their pods (PodDisruptionBudgets respected, refusals
        retried until ``timeout_s``); their names."""


@dataclass(frozen=True, slots=True)
class FaultContext:
    """What a fault acts on: the cluster and, where a run has them, its API client, its
    workload namespace, the components under test it started and API adapters."""

    cluster: Cluster
    api: client.ApiClient | None = None
    namespace: str = ""
    """The run's workload namespace (``hosting`` picks nodes by its pods)."""
    running: Mapping[str, object] = field(default_factory=dict)
    """The components under test the run started, by kind (what their kind's launcher
    returned: the controller's ``ControllerReplicas``, the webhook's ``RunningWebhook``)."""
    scheduling: NodeScheduling | None = None

    def api_client(self) -> client.ApiClient:
        """The run's API client (one for the cluster's kubeconfig without a run)."""
        return self.api if self.api is not None else kube.api_client(self.cluster.kubeconfig)

    def component(self, kind: str, fault: str, deploy: str) -> object:
        """What the run started of ``kind``; FaultError naming the ``deploy`` action if none."""
        found = self.running.get(kind)
        if found is None:
            raise errors.FaultError(f"fault {fault} needs {Kind(kind).spec.title} under test "
                                    f"running in this run: deploy it first ({deploy})")
        return found

    def replicas(self, fault: str) -> ControllerReplicas:
        """The HA controller replicas under test; FaultError if the run started none."""
        return cast(ControllerReplicas, self.component(Kind.CONTROLLER, fault,
                                                       "deploy_ha_controller"))

    def running_webhook(self, fault: str) -> RunningWebhook:
        """The webhook under test; FaultError if the run started none."""
        return cast(RunningWebhook, self.component(Kind.WEBHOOK, fault, "deploy_webhook"))

    def node_scheduling(self, fault: str) -> NodeScheduling:
        """The cordon/drain adapter; FaultError without one."""
        if self.scheduling is None:
            raise errors.FaultError(f"fault {fault} needs a NodeScheduling adapter (cordon, "
                                    "drain): run it through zoneproof.chaos or pass one")
        return self.scheduling


class Fault(Protocol):
    """A value of one registered fault kind: its parameters, and how it breaks and restores.

    The kind says its stable ``name`` (as reports show it), what it ``requires`` of the
    cluster's backend and the ``effects`` it must cause. Parameters are the dataclass
    fields, validated when the value is made (``faults.registry.build``).
    """

    name: ClassVar[str]
    requires: ClassVar[frozenset[Capability]]
    effects: ClassVar[frozenset[Effect]]

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        """What it will hit (nodes, members, processes): the blast radius, resolved now."""

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        """Break ``targets`` (as resolved by ``targets``)."""

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        """Restore ``targets``; idempotent, safe even if inject failed half-way."""


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """One injection: which kind, the effects it must cause, what it hit, and when
    (timeline seconds; ``reverted_at`` None while active or if never reverted;
    ``in_force_at`` when the injection returned, the cluster having confirmed the fault: a
    node agent acts up to its poll and an API round trip after the command)."""

    kind: str
    effects: tuple[Effect, ...]
    targets: tuple[str, ...]
    injected_at: float
    reverted_at: float | None
    in_force_at: float | None = None

    @property
    def in_force(self) -> float:
        """When the fault was in force (the injection, for a record that does not say)."""
        return self.injected_at if self.in_force_at is None else self.in_force_at

    def causes(self, *effects: Effect) -> bool:
        """True if this fault must cause any of ``effects``."""
        return any(e in self.effects for e in effects)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (faults.json, the journal)."""
        return {"kind": self.kind, "effects": [str(e) for e in self.effects],
                "targets": list(self.targets), "injected_at": self.injected_at,
                "reverted_at": self.reverted_at, "in_force_at": self.in_force_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FaultRecord:
        """The record ``to_dict`` wrote."""
        return cls(str(data["kind"]), tuple(Effect(e) for e in data["effects"]),
                   tuple(data["targets"]), float(data["injected_at"]),
                   None if data["reverted_at"] is None else float(data["reverted_at"]),
                   None if data.get("in_force_at") is None else float(data["in_force_at"]))
