"""Scheduling faults: a zone cordoned, or cordoned and drained by eviction, through the API.

They act through a ``base.NodeScheduling`` adapter (chaostoolkit-kubernetes, in
``zoneproof.chaos.k8s``); revert uncordons. Destructive: never on a user's cluster
without ``--allow-destructive``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from zoneproof import errors
from zoneproof.cluster.interface import Capability
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect
from zoneproof.faults.node import zone_nodes
from zoneproof.specs import kubernetes

__all__ = ["CordonZone", "DrainZone"]

_DESTRUCTIVE = frozenset({Capability.DESTRUCTIVE})


@registry.kind
@dataclass(frozen=True, slots=True)
class CordonZone:
    """Every node of ``zone`` unschedulable; its pods keep running."""

    name: ClassVar[str] = "cordon-zone"
    requires: ClassVar[frozenset[Capability]] = _DESTRUCTIVE
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.NODES_CORDONED})

    zone: str = "zone-a"

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return zone_nodes(context.cluster, self.zone, self.name)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        context.node_scheduling(self.name).cordon(kubernetes.zone_selector(self.zone))

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        context.node_scheduling(self.name).uncordon(kubernetes.zone_selector(self.zone))


@registry.kind
@dataclass(frozen=True, slots=True)
class DrainZone:
    """Cordon every node of ``zone`` and evict its pods like ``kubectl drain`` (PDBs
    respected, refusals retried until ``timeout_s``); inject returns once drained."""

    name: ClassVar[str] = "drain-zone"
    requires: ClassVar[frozenset[Capability]] = _DESTRUCTIVE
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.NODES_CORDONED,
                                                      Effect.NODES_DRAINED})

    zone: str = "zone-a"
    timeout_s: float = 180.0

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise errors.ConfigError(f"fault {self.name}: timeout_s must be > 0, "
                                     f"got {self.timeout_s}")

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return zone_nodes(context.cluster, self.zone, self.name)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        context.node_scheduling(self.name).drain(kubernetes.zone_selector(self.zone),
                                                 timeout_s=self.timeout_s)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        context.node_scheduling(self.name).uncordon(kubernetes.zone_selector(self.zone))
