"""Node faults: kubelets stopped on chosen nodes or a whole zone; restoring every node."""

from __future__ import annotations

from dataclasses import dataclass, field

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster

__all__ = ["StopKubelets", "ZoneOutage", "restore_nodes"]

_DESTRUCTIVE = Capability.DESTRUCTIVE


@dataclass(frozen=True, slots=True)
class StopKubelets:
    """Stop the kubelet of each node in ``nodes``; they turn NotReady through kcm."""

    nodes: tuple[str, ...]
    name: str = "stop-kubelets"
    requires: frozenset[Capability] = field(
        default=frozenset({Capability.STOP_KUBELET, _DESTRUCTIVE}))

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        return self.nodes

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for node in targets:
            facets.facet(cluster, Capability.STOP_KUBELET).stop_kubelet(node)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for node in targets:
            facets.facet(cluster, Capability.STOP_KUBELET).start_kubelet(node)


@dataclass(frozen=True, slots=True)
class ZoneOutage:
    """Every node of ``zone`` loses its kubelet at once."""

    zone: str
    name: str = "zone-outage"
    requires: frozenset[Capability] = field(
        default=frozenset({Capability.STOP_KUBELET, _DESTRUCTIVE}))

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        nodes = cluster.nodes_by_zone().get(self.zone)
        if not nodes:
            raise errors.FaultError(f"zone {self.zone!r} has no nodes: nothing to take down")
        return tuple(nodes)

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        facets.facet(cluster, Capability.STOP_KUBELET).zone_down(self.zone)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        facets.facet(cluster, Capability.STOP_KUBELET).zone_up(self.zone)


def restore_nodes(cluster: Cluster, *, timeout_s: float) -> list[str]:
    """Start every node's kubelet (a no-op where it runs) and wait until all are Ready;
    the nodes. What tests call after a fault, whatever the fault left."""
    nodes = [n for zone in cluster.nodes_by_zone().values() for n in zone]
    kubelets = facets.facet(cluster, Capability.STOP_KUBELET)
    for node in nodes:
        kubelets.start_kubelet(node)
    cluster.wait_nodes(nodes, ready=True, timeout_s=timeout_s)
    return nodes
