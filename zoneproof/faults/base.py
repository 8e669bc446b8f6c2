"""The fault contract and the record of one injection."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from zoneproof.cluster.interface import Capability, Cluster

__all__ = ["Fault", "FaultRecord"]


class Fault(Protocol):
    """Something that breaks a cluster and can be undone."""

    @property
    def name(self) -> str:
        """Stable name, as it appears in reports."""

    @property
    def requires(self) -> frozenset[Capability]:
        """What the cluster's backend must be able to do."""

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        """What it will hit (nodes, members, processes): the blast radius, resolved now."""

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        """Break ``targets`` (as resolved by ``targets``)."""

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        """Restore ``targets``; idempotent, safe even if inject failed half-way."""


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """One injection: what, where, and when (timeline seconds; None if never reverted)."""

    name: str
    targets: tuple[str, ...]
    injected_at: float
    reverted_at: float | None
