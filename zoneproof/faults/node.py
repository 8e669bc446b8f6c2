"""Node faults: kubelets stopped on chosen nodes or a whole zone (or its machines frozen, the
zone's pods with them); restoring every node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kubernetes import client

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, Kubelets
from zoneproof.components.harness.controller import ControllerReplicas
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect
from zoneproof.traffic import workloads

__all__ = ["LEADER_ZONE", "StopKubelets", "ZoneOutage", "leader_zone", "pick_nodes",
           "restore_nodes", "zone_of"]

_KUBELET = frozenset({Capability.STOP_KUBELET, Capability.DESTRUCTIVE})


def _kubelets(cluster: Cluster) -> Kubelets:
    return facets.facet(cluster, Capability.STOP_KUBELET)


def pick_nodes(by_zone: dict[str, list[str]], count: int, zones: tuple[str, ...]) -> list[str]:
    """``count`` nodes taking ``zones`` (all when empty) in turn, first node of each zone
    first, no repeats; ConfigError if the zones cannot give that many."""
    chosen_zones = list(zones) or sorted(by_zone)
    unknown = [z for z in chosen_zones if z not in by_zone]
    if unknown:
        raise errors.ConfigError(f"unknown zones {unknown}: the cluster has {sorted(by_zone)}")
    columns = [sorted(by_zone[z]) for z in chosen_zones]
    order = [c[i] for i in range(max(map(len, columns), default=0)) for c in columns if i < len(c)]
    if count < 1 or count > len(order):
        raise errors.ConfigError(f"count must be 1..{len(order)} for zones {chosen_zones}, "
                                 f"got {count}")
    return order[:count]


@registry.kind
@dataclass(frozen=True, slots=True)
class StopKubelets:
    """Stop the kubelets of ``nodes``, or of ``count`` nodes spread over ``zones`` (all
    zones when empty), only nodes running a Ready pod of the run's workload ``hosting``
    (``db``, ``core``) when given; they turn NotReady through kcm."""

    name: ClassVar[str] = "stop-kubelets"
    requires: ClassVar[frozenset[Capability]] = _KUBELET
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.KUBELETS_STOPPED,
                                                      Effect.NODES_NOT_READY})

    nodes: tuple[str, ...] = ()
    count: int = 1
    zones: tuple[str, ...] = ()
    hosting: str = ""

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        if self.nodes:
            return self.nodes
        by_zone = context.cluster.nodes_by_zone()
        if self.hosting:
            used = set(workloads.ready_pods(client.CoreV1Api(context.api_client()),
                                            context.namespace, self.hosting).values())
            by_zone = {z: [n for n in names if n in used] for z, names in by_zone.items()}
        return tuple(pick_nodes(by_zone, self.count, self.zones))

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        for node in targets:
            _kubelets(context.cluster).stop_kubelet(node)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        for node in targets:
            _kubelets(context.cluster).start_kubelet(node)


def zone_nodes(cluster: Cluster, zone: str, fault: str) -> tuple[str, ...]:
    """The nodes of ``zone``; FaultError if it has none (nothing for ``fault`` to hit)."""
    nodes = cluster.nodes_by_zone().get(zone)
    if not nodes:
        raise errors.FaultError(f"zone {zone!r} has no nodes: nothing for {fault} to hit")
    return tuple(nodes)


#: ``ZoneOutage.zone`` naming the zone of the node the controller's Lease holder runs on.
LEADER_ZONE = "controller-leader"


def zone_of(node: str, by_zone: dict[str, list[str]]) -> str:
    """The zone of ``node`` ('' when it is in none, or empty)."""
    return next((zone for zone, nodes in by_zone.items() if node and node in nodes), "")


def leader_zone(replicas: ControllerReplicas, by_zone: dict[str, list[str]]
                ) -> tuple[str, str, str]:
    """(zone, replica, its node) of the controller replica holding the Lease; while nobody
    holds it (a controller that never takes it: every replica acts), of the first live
    replica by name. FaultError when that replica runs on no zone's node (a host process,
    an unscheduled pod)."""
    holder = replicas.holder()
    acting = [holder] if holder else sorted(i for i in replicas.identities if replicas.alive(i))
    for identity in acting:
        where = replicas.node_of(identity)
        if zone := zone_of(where, by_zone):
            return zone, identity, where
    raise errors.FaultError(
        f"the controller Lease is held by {holder or 'nobody'!r} and no acting replica "
        f"({acting}) runs on a zone's node (zones {sorted(by_zone)}): zone {LEADER_ZONE!r} "
        "needs an in-cluster controller (--zp-components in-cluster)")


@registry.kind
@dataclass(frozen=True, slots=True)
class ZoneOutage:
    """Every node of ``zone`` loses its kubelet at once; with ``freeze`` its whole machine
    (kubelet and pods: components in the zone die with it) freezes instead."""

    name: ClassVar[str] = "zone-outage"
    requires: ClassVar[frozenset[Capability]] = _KUBELET
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.KUBELETS_STOPPED,
                                                      Effect.NODES_NOT_READY})

    zone: str = "zone-a"
    """A zone, or ``controller-leader``: the zone the controller's Lease holder runs in when
    the fault begins (an in-cluster controller)."""
    freeze: bool = False
    """Pause every node's machine (needs Capability.NODE_CONTAINERS: kind), not only stop
    its kubelet: the zone's pods stop answering too, as in a real zone loss."""

    def _zone(self, context: FaultContext) -> str:
        if self.zone != LEADER_ZONE:
            return self.zone
        return leader_zone(context.replicas(self.name), context.cluster.nodes_by_zone())[0]

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return zone_nodes(context.cluster, self._zone(context), self.name)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        zone = self._zone(context)  # the Lease may have moved since the targets were chosen
        if set(zone_nodes(context.cluster, zone, self.name)) != set(targets):
            raise errors.FaultError(f"zone {self.zone!r} is {zone} now, not the zone of "
                                    f"{sorted(targets)} chosen a moment ago (the controller "
                                    "Lease moved): the outage would miss the leader")
        if self.freeze:
            facets.facet(context.cluster, Capability.NODE_CONTAINERS).pause_nodes(list(targets))
        else:
            _kubelets(context.cluster).zone_down(zone)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        if self.freeze:
            facets.facet(context.cluster, Capability.NODE_CONTAINERS).unpause_nodes(list(targets))
            return
        by_zone = context.cluster.nodes_by_zone()
        for zone in sorted(z for z, nodes in by_zone.items() if set(nodes) & set(targets)):
            _kubelets(context.cluster).zone_up(zone)


def restore_nodes(cluster: Cluster, *, timeout_s: float) -> list[str]:
    """Start every node's kubelet (a no-op where it runs) and wait until all are Ready;
    the nodes. What tests call after a fault, whatever the fault left."""
    nodes = [n for zone in cluster.nodes_by_zone().values() for n in zone]
    kubelets = _kubelets(cluster)
    for node in nodes:
        kubelets.start_kubelet(node)
    cluster.wait_nodes(nodes, ready=True, timeout_s=timeout_s)
    return nodes
