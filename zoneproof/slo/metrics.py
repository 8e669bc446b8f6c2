"""Figures computed from a Timeline and the FaultRecord of what was injected.

Each returns seconds (or a count), or None when the timeline lacks what it needs, which
the SLO then reports as NO_DATA (a fail unless allowed): a figure never passes by
default. Every function is pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from zoneproof.faults.base import FaultRecord
from zoneproof.measure.timeline import Event, Timeline

__all__ = [
    "force_delete_after_not_ready",
    "lease_failover",
    "not_ready_detection",
    "pod_ready_elsewhere",
]


def _max(values: Iterable[float | None]) -> float | None:
    """The largest value; None if any is missing (a node never recovered) or there are none."""
    collected = list(values)
    if not collected or any(v is None for v in collected):
        return None
    return max(v for v in collected if v is not None)


def _not_ready_at(timeline: Timeline, node: str, after: float) -> float | None:
    for event in timeline.select("node_ready", node, after=after):
        if event.detail.get("status") != "True":
            return event.t
    return None


def not_ready_detection(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Seconds from injection until the slowest target node was seen NotReady/Unknown."""
    return _max(
        (t - fault.injected_at) if (t := _not_ready_at(timeline, node, fault.injected_at))
        is not None else None
        for node in fault.targets)


def _first(events: Iterable[Event]) -> Event | None:
    return next(iter(events), None)


def force_delete_after_not_ready(timeline: Timeline, fault: FaultRecord,
                                 pods: Iterable[str]) -> float | None:
    """Seconds from a target node turning NotReady until each of ``pods`` on it was gone.

    ``pods`` are ``namespace/name`` of the pods that should be force-deleted; the figure is
    the slowest one. A pod that was never deleted makes it None.
    """
    waits: list[float | None] = []
    for pod in pods:
        created = _first(timeline.select("pod_scheduled", pod))
        node = created.detail.get("node", "") if created else ""
        not_ready = _not_ready_at(timeline, node, fault.injected_at) if node in fault.targets \
            else None
        deleted = _first(timeline.select("pod_deleted", pod, after=fault.injected_at))
        waits.append(deleted.t - not_ready if deleted and not_ready is not None else None)
    return _max(waits)


def pod_ready_elsewhere(timeline: Timeline, fault: FaultRecord, pods: Iterable[str]
                        ) -> float | None:
    """Seconds from injection until each pod name is Ready again on a node not hit.

    A StatefulSet pod keeps its name; the replacement is a new uid on another node.
    """
    waits: list[float | None] = []
    for pod in pods:
        ready = _first(e for e in timeline.select("pod_ready", pod, after=fault.injected_at)
                       if e.detail.get("node") not in fault.targets)
        waits.append(ready.t - fault.injected_at if ready else None)
    return _max(waits)


def lease_failover(timeline: Timeline, fault: FaultRecord, lease: str) -> float | None:
    """Seconds from injection until the Lease is held by someone other than the holder then."""
    before = [e for e in timeline.select("lease_holder", lease) if e.t <= fault.injected_at]
    old = before[-1].detail.get("holder", "") if before else ""
    new = _first(e for e in timeline.select("lease_holder", lease, after=fault.injected_at)
                 if e.detail.get("holder") not in ("", old))
    return new.t - fault.injected_at if new else None
