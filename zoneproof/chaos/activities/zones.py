"""The zones as failure domains: leaders placed in a zone, leaders awaited outside one, an
isolated member's writes tried, a zone returning, and where added latency between zones
breaks each SLO."""

import time
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.chaos import session
from zoneproof.chaos.experiment import ExperimentRun
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Zones
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.faults import Injector, SlowZoneLinks
from zoneproof.faults.effects import StatedTimings
from zoneproof.measure import CONTROL_PLANE_LEASES
from zoneproof.slo import effect_checks, zone_metrics

__all__ = ["place_leaders", "probe_latency_limits", "probe_member_writes", "zone_returns",
           "wait_control_plane_leaders"]


def _zones(run: ExperimentRun) -> Zones:
    return facets.facet(run.cluster, Capability.ZONES)


def place_leaders(zone: str = "zone-a") -> dict[str, str]:
    """Make ``zone``'s etcd member, kube-controller-manager and kube-scheduler the leaders
    (so that an outage of it re-elects all three); who leads now."""
    run = session.current()
    placed = _zones(run).place_leaders(zone)
    run.timeline.add("leaders_placed", zone, **placed)
    return placed


def _holders(run: ExperimentRun) -> dict[str, str]:
    return {name: kube.lease_holder(run.api, "kube-system", name) for name in CONTROL_PLANE_LEASES}


def wait_control_plane_leaders(avoid_zone: str, timeout_s: float = 30.0) -> dict[str, str]:
    """Wait until kcm's and the scheduler's Leases are held by replicas outside
    ``avoid_zone`` (their identities start with their zone); the holders."""
    run = session.current()

    def probe() -> tuple[bool, dict[str, str]]:
        holders = _holders(run)
        return all(h and not h.startswith(f"{avoid_zone}_") for h in holders.values()), holders

    return waiting.wait_for(probe, what=f"control-plane leaders outside {avoid_zone}",
                            timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))


def probe_member_writes(zone: str, attempts: int = 3, timeout_s: float = 3.0) -> dict[str, int]:
    """Send ``attempts`` linearizable writes to ``zone``'s etcd member alone, each
    recorded (``member_write`` ok); an isolated member must acknowledge none (the
    isolated-member-writes SLO judges it). How many were acknowledged."""
    if attempts < 1 or timeout_s <= 0:
        raise errors.ConfigError(f"attempts must be >= 1 and timeout_s > 0, got {attempts} "
                                 f"and {timeout_s}")
    run = session.current()
    zones = _zones(run)
    member = zones.zone_control_plane(zone)["etcd"]
    acknowledged = 0
    for _ in range(attempts):
        ok = zones.etcd_write(member, timeout_s)
        acknowledged += ok
        run.timeline.add("member_write", member, ok=str(ok))
    return {"attempts": attempts, "acknowledged": acknowledged}


def zone_returns(zone: str, timeout_s: float = 60.0) -> list[str]:
    """``zone`` comes back while the faults that took it down are still in force for the
    others: its etcd member and control-plane processes are started (their faults' reverts
    later find them running), recorded as ``zone_returned``; returns once its member serves
    (quorum-recovery judges how soon writes succeed again). The processes started."""
    run = session.current()
    zones = _zones(run)
    member = zones.zone_control_plane(zone)["etcd"]
    etcd = facets.facet(run.cluster, Capability.ETCD_MEMBERS)
    etcd.restart_etcd_member(member)
    run.timeline.add("zone_returned", zone, member=member)
    started = [member, *zones.restart_zone_processes(zone)]
    waiting.wait_for(lambda: (etcd.etcd_member_healthy(member), None),
                     what=f"{member} healthy (a quorum again)", timeout_s=timeout_s)
    return started


#: The SLOs whose figures the latency sweep reports, by metric.
_LATENCY_METRICS = {"write_latency_p99": zone_metrics.write_latency_p99,
                    "etcd_leader_changes": zone_metrics.etcd_leader_changes,
                    "control_plane_leader_changes": zone_metrics.control_plane_leader_changes}


def probe_latency_limits(levels_ms: list[int], hold_s: float = 10.0, zone: str = "") -> dict[str, Any]:
    """Where added latency between zones breaks each latency SLO: latency ``levels_ms``
    (one way, ascending) added in turn for ``hold_s`` each, between ``zone`` and the others
    (all zones: ''), each level's figures taken from the run's timeline. Reported, not
    judged: each level is a fault of its own injector (bounded, reverted, its effect
    checked: a level that did not take effect says so), outside the run's, whose SLOs
    judge only the experiment's own faults. Per level: the figures, whether each SLO held;
    per SLO: the first level at which it failed (None: it held at every level)."""
    if not levels_ms or sorted(levels_ms) != list(levels_ms) or hold_s <= 0:
        raise errors.ConfigError(f"levels_ms must be ascending and non-empty and hold_s > 0, "
                                 f"got {levels_ms} and {hold_s}")
    run = session.current()
    slos = [s for s in run.config.slo_set.slos if s.metric in _LATENCY_METRICS]
    probe = Injector(run.cluster, run.timeline)
    timings = StatedTimings.of(run.cluster.timings,
                               ControllerSettings(namespaces=(run.namespace,)))
    levels: list[dict[str, Any]] = []
    for level in levels_ms:
        fault = SlowZoneLinks(zone=zone, latency_ms=level)
        with probe.injected(fault, max_duration_s=hold_s + 30):
            run.timeline.add("latency_level", zone or "all", latency_ms=str(level))
            time.sleep(hold_s)
        record = probe.records[-1]
        checks = effect_checks.check([record], run.timeline.events, timings)
        figures = {m: f(run.timeline, record) for m, f in _LATENCY_METRICS.items()}
        held = {s.name: (f := figures[s.metric]) is not None and f <= s.max for s in slos}
        levels.append({"latency_ms": level, "effective": all(c.effective for c in checks),
                       "figures": figures, "held": held})
    first_failed = {s.name: next((lv["latency_ms"] for lv in levels
                                  if lv["effective"] and not lv["held"][s.name]), None)
                    for s in slos}
    for name, failing in first_failed.items():
        run.timeline.add("latency_limit", name,
                         fails_at_ms="" if failing is None else str(failing))
    return {"levels": levels, "first_failing_ms": first_failed}
