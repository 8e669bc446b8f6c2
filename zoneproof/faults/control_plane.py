"""Control-plane faults: kube-apiserver, kcm or the scheduler SIGKILLed; revert restarts it."""

from __future__ import annotations

from dataclasses import dataclass, field

from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, Component

__all__ = ["KillComponent"]

_DESTRUCTIVE = Capability.DESTRUCTIVE


@dataclass(frozen=True, slots=True)
class KillComponent:
    """SIGKILL kube-apiserver, kcm or the scheduler; revert restarts it."""

    component: Component
    name: str = "kill-control-plane"
    requires: frozenset[Capability] = field(
        default=frozenset({Capability.CONTROL_PLANE, _DESTRUCTIVE}))

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        return (self.component.value,)

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        facets.facet(cluster, Capability.CONTROL_PLANE).kill_component(self.component)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        facets.facet(cluster, Capability.CONTROL_PLANE).restart_component(self.component)
