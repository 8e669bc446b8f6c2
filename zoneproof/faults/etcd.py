"""etcd faults: one member, the leader or a quorum SIGKILLed; revert restarts them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, EtcdMembers
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect

__all__ = ["KillEtcdLeader", "KillEtcdMember", "KillEtcdMembers"]

_ETCD = frozenset({Capability.ETCD_MEMBERS, Capability.DESTRUCTIVE})


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


def _kill(cluster: Cluster, members: tuple[str, ...]) -> None:
    for member in members:
        _etcd(cluster).kill_etcd_member(member)


def _restart(cluster: Cluster, members: tuple[str, ...], timeout_s: float) -> None:
    etcd = _etcd(cluster)
    for member in members:
        etcd.restart_etcd_member(member)
    etcd.wait_etcd_healthy(timeout_s=timeout_s)


class _KillsMembers:
    """SIGKILL the targets; revert restarts them and waits ``restart_timeout_s`` for etcd
    to be healthy."""

    __slots__ = ()
    restart_timeout_s: ClassVar[float] = 30.0

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _kill(context.cluster, targets)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _restart(context.cluster, targets, self.restart_timeout_s)


@registry.kind
@dataclass(frozen=True, slots=True)
class KillEtcdMember(_KillsMembers):
    """SIGKILL one etcd member: ``role`` is ``follower`` or a member name (the leader:
    ``kill-etcd-leader``, which also declares the leader change)."""

    name: ClassVar[str] = "kill-etcd-member"
    requires: ClassVar[frozenset[Capability]] = _ETCD
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.ETCD_MEMBERS_DOWN})

    role: str = "follower"

    def __post_init__(self) -> None:
        if self.role == "leader":
            raise errors.ConfigError(f"fault {self.name}: role 'leader': use fault "
                                     "kill-etcd-leader (it must also cause a leader change)")

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return _pick_members(context.cluster, self.role, 1)


@registry.kind
@dataclass(frozen=True, slots=True)
class KillEtcdLeader(_KillsMembers):
    """SIGKILL the etcd leader: the other members must elect a new one; revert restarts it."""

    name: ClassVar[str] = "kill-etcd-leader"
    requires: ClassVar[frozenset[Capability]] = _ETCD
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.ETCD_MEMBERS_DOWN,
                                                      Effect.ETCD_LEADER_CHANGED})

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return _pick_members(context.cluster, "leader", 1)


@registry.kind
@dataclass(frozen=True, slots=True)
class KillEtcdMembers(_KillsMembers):
    """SIGKILL ``count`` members, followers first, at least a majority (2 of 3), or the
    ``members`` named (the members of two zones): quorum is lost; revert restarts them."""

    name: ClassVar[str] = "kill-etcd-quorum"
    restart_timeout_s: ClassVar[float] = 60.0
    requires: ClassVar[frozenset[Capability]] = _ETCD
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.ETCD_MEMBERS_DOWN,
                                                      Effect.ETCD_QUORUM_LOST})

    count: int = 2
    members: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.count < 1:
            raise errors.ConfigError(f"count must be >= 1, got {self.count}")

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        members = _etcd(context.cluster).etcd_members()
        if self.members:
            unknown = sorted(set(self.members) - set(members))
            if unknown or len(set(self.members)) <= len(members) // 2:
                raise errors.FaultError(
                    f"{self.name}: members {list(self.members)} must be a majority of "
                    f"{members}" + (f" (unknown: {unknown})" if unknown else ""))
            return tuple(self.members)
        if self.count <= len(members) // 2:
            raise errors.FaultError(f"{self.name}: killing {self.count} of {len(members)} etcd "
                                    f"members keeps quorum: kill at least {len(members) // 2 + 1}"
                                    " (or use kill-etcd-member)")
        if self.count < len(members):
            return _pick_members(context.cluster, "follower", self.count)
        return tuple(members)
