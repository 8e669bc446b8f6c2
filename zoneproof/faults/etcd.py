"""etcd faults: one member or a quorum SIGKILLed; revert restarts them."""

from __future__ import annotations

from dataclasses import dataclass, field

from zoneproof import errors
from zoneproof.cluster.interface import Capability, Cluster

__all__ = ["KillEtcdMember", "KillEtcdMembers"]

_DESTRUCTIVE = Capability.DESTRUCTIVE


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
