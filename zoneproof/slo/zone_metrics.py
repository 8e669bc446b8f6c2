"""Figures of zone faults: leaders re-elected outside a zone, the API under added latency, an
isolated etcd member's writes. Pure functions of a Timeline and the FaultRecord judged;
None when the timeline lacks what the figure needs (NO_DATA: never a pass by default).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from zoneproof.faults.base import FaultRecord
from zoneproof.measure.timeline import Event, Timeline

__all__ = [
    "control_plane_leader_changes",
    "control_plane_reelection",
    "etcd_leader_changes",
    "etcd_leader_reelection",
    "fault_zone",
    "member_writes_acknowledged",
    "write_latency_p99",
    "writes_after_zone_returned",
]


def _window(timeline: Timeline, fault: FaultRecord) -> tuple[float, float]:
    """From the fault in force until its revert (the timeline's end while active)."""
    end = fault.reverted_at if fault.reverted_at is not None else max(
        (e.t for e in timeline.events), default=fault.in_force)
    return fault.in_force, end


def _during(timeline: Timeline, fault: FaultRecord, kind: str) -> list[Event]:
    start, end = _window(timeline, fault)
    return [e for e in timeline.select(kind) if start <= e.t <= end]


def fault_zone(timeline: Timeline, fault: FaultRecord) -> str | None:
    """The zone a fault hit: the one zone (as ``control_plane_leader`` events name the
    holders' zones, or ``link_rtt`` the zones probed) some target ends with (``-zone-a``)."""
    zones = {e.detail.get("zone", "") for e in timeline.select("control_plane_leader")}
    zones |= {e.subject for e in timeline.select("link_rtt")}
    hit = {z for z in zones if z and any(t.endswith(f"-{z}") for t in fault.targets)}
    return hit.pop() if len(hit) == 1 else None


def control_plane_reelection(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Seconds from injection until every control-plane Lease (kcm, scheduler) whose holder
    ran in the zone ``fault`` hit is held by a replica of another zone; None when the zone
    is unknown or held none of them (nothing to re-elect: the figure would prove nothing)."""
    zone = fault_zone(timeline, fault)
    if zone is None:
        return None
    waits: list[float | None] = []
    for lease in sorted({e.subject for e in timeline.select("control_plane_leader")}):
        before = [e for e in timeline.select("control_plane_leader", lease)
                  if e.t <= fault.injected_at]
        if not before or before[-1].detail.get("zone") != zone:
            continue
        moved = next((e for e in timeline.select("control_plane_leader", lease,
                                                 after=fault.injected_at)
                      if e.detail.get("zone") not in ("", zone)), None)
        waits.append(moved.t - fault.injected_at if moved else None)
    if not waits or any(w is None for w in waits):
        return None
    return max(w for w in waits if w is not None)


def etcd_leader_reelection(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Seconds from injection until a member other than the targets leads etcd."""
    new = next((e for e in timeline.select("etcd_leader", after=fault.injected_at)
                if e.detail.get("leader") not in ("", None, *fault.targets)), None)
    return new.t - fault.injected_at if new else None


def write_latency_p99(timeline: Timeline, fault: FaultRecord) -> float | None:
    """p99 of the seconds the background writer's writes took while ``fault`` was in force
    (a failed write counts with the time it took to fail); None without a timed write."""
    took = sorted(float(e.detail["seconds"]) for kind in ("write_acknowledged", "write_failed")
                  for e in _during(timeline, fault, kind) if e.detail.get("seconds"))
    if not took:
        return None
    return took[max(0, math.ceil(0.99 * len(took)) - 1)]


def _changes(events: Iterable[Event], key: str) -> float:
    """How often ``key`` took a new non-empty value, per subject, in ``events`` (in order)."""
    last: dict[str, str] = {}
    changes = 0
    for event in events:
        value = event.detail.get(key, "")
        if event.subject in last and value and value != last[event.subject]:
            changes += 1
        last[event.subject] = value or last.get(event.subject, "")
    return float(changes)


def _since_before(timeline: Timeline, fault: FaultRecord, kind: str) -> list[Event]:
    """The last ``kind`` event per subject before the fault, then those during it."""
    start, _ = _window(timeline, fault)
    last: dict[str, Event] = {}
    for event in timeline.select(kind):
        if event.t < start:
            last[event.subject] = event
    return [*last.values(), *_during(timeline, fault, kind)]


def etcd_leader_changes(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Times etcd's leader changed (to another member, or none) while ``fault`` was in
    force; None without an ``etcd_leader`` event before it."""
    events = _since_before(timeline, fault, "etcd_leader")
    if not any(e.t < fault.in_force for e in events):
        return None
    flat = [Event(e.t, e.wall, e.kind, e.subject, {"leader": e.detail.get("leader") or "-"})
            for e in events]
    return _changes(flat, "leader")


def control_plane_leader_changes(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Times a control-plane Lease (kcm, scheduler) changed holder while ``fault`` was in
    force; None without a ``control_plane_leader`` event before it."""
    events = _since_before(timeline, fault, "control_plane_leader")
    if not any(e.t < fault.in_force for e in events):
        return None
    return _changes(events, "holder")


def member_writes_acknowledged(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Writes an etcd target member acknowledged on its own (``member_write`` ok=True) while
    ``fault`` was in force; None when none was tried then."""
    tried = [e for e in _during(timeline, fault, "member_write") if e.subject in fault.targets]
    if not tried:
        return None
    return float(sum(1 for e in tried if e.detail.get("ok") == "True"))


def writes_after_zone_returned(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Seconds from the first zone that came back while ``fault`` held the quorum lost
    (``zone_returned``) to the next acknowledged write; None without both."""
    start, end = _window(timeline, fault)
    returned = next((e for e in timeline.select("zone_returned")
                     if start <= e.t <= end), None)
    if returned is None:
        return None
    written = next((e for e in timeline.select("write_acknowledged", after=returned.t)), None)
    return written.t - returned.t if written else None
