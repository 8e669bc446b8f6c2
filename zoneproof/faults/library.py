"""The faults: node/zone kubelet loss, etcd member and quorum loss, control-plane kills."""

from __future__ import annotations

from dataclasses import dataclass, field

from zoneproof import errors
from zoneproof.cluster.interface import Capability, Cluster, Component

__all__ = ["KillComponent", "KillEtcdMember", "KillEtcdMembers", "StopKubelets", "ZoneOutage"]

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
            cluster.stop_kubelet(node)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for node in targets:
            cluster.start_kubelet(node)


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
        cluster.zone_down(self.zone)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        cluster.zone_up(self.zone)


def _pick_members(cluster: Cluster, role: str, count: int) -> tuple[str, ...]:
    members = cluster.etcd_members()
    if role == "leader":
        return (cluster.etcd_leader(),)
    if role == "follower":
        leader = cluster.etcd_leader()
        return tuple(m for m in members if m != leader)[:count]
    if role in members:
        return (role,)
    raise errors.FaultError(f"etcd member {role!r} is not 'leader', 'follower' or one of "
                            f"{members}")


@dataclass(frozen=True, slots=True)
class KillEtcdMember:
    """SIGKILL one etcd member: ``role`` is ``leader``, ``follower`` or a member name."""

    role: str = "leader"
    name: str = "kill-etcd-member"
    requires: frozenset[Capability] = field(
        default=frozenset({Capability.ETCD_MEMBERS, _DESTRUCTIVE}))

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        return _pick_members(cluster, self.role, 1)

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            cluster.kill_etcd_member(member)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            cluster.restart_etcd_member(member)
        cluster.wait_etcd_healthy()


@dataclass(frozen=True, slots=True)
class KillEtcdMembers:
    """SIGKILL ``count`` members, followers first (2 of 3: quorum lost); revert restarts them."""

    count: int = 2
    name: str = "kill-etcd-quorum"
    requires: frozenset[Capability] = field(
        default=frozenset({Capability.ETCD_MEMBERS, _DESTRUCTIVE}))

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        return _pick_members(cluster, "follower", self.count) if self.count < len(
            cluster.etcd_members()) else tuple(cluster.etcd_members())

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            cluster.kill_etcd_member(member)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            cluster.restart_etcd_member(member)
        cluster.wait_etcd_healthy(timeout_s=60)


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
        cluster.kill_component(self.component)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        cluster.restart_component(self.component)


def restore_nodes(cluster: Cluster, *, timeout_s: float) -> list[str]:
    """Start every node's kubelet (a no-op where it runs) and wait until all are Ready;
    the nodes. What tests call after a fault, whatever the fault left."""
    nodes = [n for zone in cluster.nodes_by_zone().values() for n in zone]
    for node in nodes:
        cluster.start_kubelet(node)
    cluster.wait_nodes(nodes, ready=True, timeout_s=timeout_s)
    return nodes
