"""etcd faults: one member or a quorum SIGKILLed; revert restarts them."""

from __future__ import annotations

from dataclasses import dataclass, field

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, EtcdMembers

__all__ = ["KillEtcdMember", "KillEtcdMembers"]

_DESTRUCTIVE = Capability.DESTRUCTIVE


def _etcd(cluster: Cluster) -> EtcdMembers:
    return facets.facet(cluster, Capability.ETCD_MEMBERS)


def _pick_members(cluster: Cluster, role: str, count: int) -> tuple[str, ...]:
    etcd = _etcd(cluster)
    members = etcd.etcd_members()
    if role == "leader":
        return (etcd.etcd_leader(),)
    if role == "follower":
        leader = etcd.etcd_leader()
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
            _etcd(cluster).kill_etcd_member(member)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            _etcd(cluster).restart_etcd_member(member)
        _etcd(cluster).wait_etcd_healthy()


@dataclass(frozen=True, slots=True)
class KillEtcdMembers:
    """SIGKILL ``count`` members, followers first (2 of 3: quorum lost); revert restarts them."""

    count: int = 2
    name: str = "kill-etcd-quorum"
    requires: frozenset[Capability] = field(
        default=frozenset({Capability.ETCD_MEMBERS, _DESTRUCTIVE}))

    def targets(self, cluster: Cluster) -> tuple[str, ...]:
        members = _etcd(cluster).etcd_members()
        return _pick_members(cluster, "follower", self.count) if self.count < len(
            members) else tuple(members)

    def inject(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            _etcd(cluster).kill_etcd_member(member)

    def revert(self, cluster: Cluster, targets: tuple[str, ...]) -> None:
        for member in targets:
            _etcd(cluster).restart_etcd_member(member)
        _etcd(cluster).wait_etcd_healthy(timeout_s=60)
