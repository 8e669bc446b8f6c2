"""Zone faults: a zone's control plane down, a zone partitioned, its kubelets cut off, its
links slowed.

A full zone outage is the zone's kubelets (``zone-outage``), its etcd member
(``kill-etcd-member`` with the member's name) and the rest of its control plane
(``kill-zone-control-plane``) at once: three faults injected together (chaos/zone-outage-full.yaml),
so that each declares effects observed on targets of one kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, ZoneCut, Zones
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect
from zoneproof.faults.node import zone_nodes

__all__ = ["CutKubelets", "KillZoneControlPlane", "SlowZoneLinks", "ZonePartition",
           "link_target", "parse_link_target"]

_ZONES = frozenset({Capability.ZONES, Capability.DESTRUCTIVE})
#: Roles of a zone's control plane that ``kill-zone-control-plane`` kills (etcd apart).
_KILLED = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def _zones(cluster: Cluster) -> Zones:
    return facets.facet(cluster, Capability.ZONES)


def _check_zone(cluster: Cluster, zone: str, fault: str) -> None:
    zones = sorted(cluster.nodes_by_zone())
    if zone not in zones:
        raise errors.FaultError(f"{fault}: no zone {zone!r} in cluster {cluster.name!r}; "
                                f"zones: {zones}")


@registry.kind
@dataclass(frozen=True, slots=True)
class KillZoneControlPlane:
    """SIGKILL ``zone``'s kube-apiserver, kcm and scheduler replicas (and its end of the
    links between zones); the other zones' replicas must carry on. Revert starts them."""

    name: ClassVar[str] = "kill-zone-control-plane"
    requires: ClassVar[frozenset[Capability]] = _ZONES
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.CONTROL_PLANE_DOWN})

    zone: str = "zone-a"

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        plane = _zones(context.cluster).zone_control_plane(self.zone)
        return tuple(plane[role] for role in _KILLED)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _zones(context.cluster).kill_zone_processes(self.zone)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _zones(context.cluster).restart_zone_processes(self.zone)


@registry.kind
@dataclass(frozen=True, slots=True)
class ZonePartition:
    """``zone`` and the other zones cannot reach each other, both ways, while everything in
    it keeps running (split brain): its etcd member loses the quorum (the target: it must
    report no leader), its API server serves no linearizable request, its kcm and scheduler
    lose their Leases. Revert heals the links and starts what exited meanwhile (kcm and the
    scheduler exit when they lose their Lease, as upstream's do), then waits for etcd."""

    name: ClassVar[str] = "zone-partition"
    requires: ClassVar[frozenset[Capability]] = _ZONES | {Capability.ETCD_MEMBERS}
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.ETCD_MEMBERS_DOWN})

    zone: str = "zone-a"
    restart_timeout_s: ClassVar[float] = 60.0

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return (_zones(context.cluster).zone_control_plane(self.zone)["etcd"],)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _zones(context.cluster).cut_zone(self.zone, ZoneCut.PARTITION)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        zones = _zones(context.cluster)
        zones.restore_zone(self.zone, ZoneCut.PARTITION)
        zones.restart_zone_processes(self.zone)
        facets.facet(context.cluster, Capability.ETCD_MEMBERS).wait_etcd_healthy(
            timeout_s=self.restart_timeout_s)


@registry.kind
@dataclass(frozen=True, slots=True)
class CutKubelets:
    """``zone``'s kubelets cannot reach any API server (one way: their packets are dropped),
    while they, their pods and everything else keep running (seed 004's dependency-watchdog
    case: nodes NotReady, workloads fine). Revert heals the link. (The zoned local bed drops
    them in its wan; kind in the zone's node containers, with nftables.)"""

    name: ClassVar[str] = "kubelet-apiserver-cut"
    requires: ClassVar[frozenset[Capability]] = frozenset({Capability.KUBELET_LINKS,
                                                           Capability.DESTRUCTIVE})
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.KUBELETS_STOPPED,
                                                      Effect.NODES_NOT_READY})

    zone: str = "zone-a"

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return zone_nodes(context.cluster, self.zone, self.name)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        facets.facet(context.cluster, Capability.KUBELET_LINKS).cut_kubelet_links(self.zone)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        facets.facet(context.cluster, Capability.KUBELET_LINKS).restore_kubelet_links(self.zone)


_LINK = re.compile(r"^(?P<a>[^<>]+)<->(?P<b>[^<>+]+)\+(?P<ms>\d+)ms$")


def link_target(a: str, b: str, latency_ms: int) -> str:
    """The target naming the link between zones ``a`` and ``b`` and the latency added each
    way: ``zone-a<->zone-b+200ms`` (what the effect check reads)."""
    return f"{a}<->{b}+{latency_ms}ms"


def parse_link_target(target: str) -> tuple[str, str, int] | None:
    """(zone, zone, added one-way latency in ms) of a ``link_target``; None for another."""
    if (match := _LINK.match(target)) is None:
        return None
    return match["a"], match["b"], int(match["ms"])


@registry.kind
@dataclass(frozen=True, slots=True)
class SlowZoneLinks:
    """Every link between ``zone`` and the other zones (between all zones: '') gets
    ``latency_ms`` more each way (± ``jitter_ms``), through the zones' toxiproxies: etcd's
    raft and the API servers' etcd clients cross them. Revert removes it."""

    name: ClassVar[str] = "zone-latency"
    requires: ClassVar[frozenset[Capability]] = _ZONES
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.LINKS_SLOWED})

    zone: str = ""
    latency_ms: int = 100
    jitter_ms: int = 0

    def __post_init__(self) -> None:
        if self.latency_ms < 1 or self.jitter_ms < 0 or self.jitter_ms > self.latency_ms:
            raise errors.ConfigError(
                f"fault {self.name}: latency_ms must be >= 1 and 0 <= jitter_ms <= latency_ms, "
                f"got {self.latency_ms} and {self.jitter_ms}")

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        zones = sorted(context.cluster.nodes_by_zone())
        if self.zone:
            _check_zone(context.cluster, self.zone, self.name)
        pairs = [(a, b) for i, a in enumerate(zones) for b in zones[i + 1:]
                 if not self.zone or self.zone in (a, b)]
        return tuple(link_target(a, b, self.latency_ms) for a, b in pairs)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _zones(context.cluster).shape_links(self.zone, self.latency_ms, self.jitter_ms, 0, 0)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        _zones(context.cluster).unshape_links()
