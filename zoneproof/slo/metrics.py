"""Figures computed from a Timeline and the FaultRecord of what was injected.

Each returns seconds (or a count), or None when the timeline lacks what it needs, which
the SLO then reports as NO_DATA (a fail unless allowed): a figure never passes by
default. Every function is pure.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Iterable

from zoneproof.faults.base import FaultRecord
from zoneproof.measure import attribution
from zoneproof.measure.audit import LeaseRequest, PodDeletion
from zoneproof.measure.lease import LeaseHistory, observations
from zoneproof.measure.timeline import Event, Timeline

__all__ = [
    "admission_latency_p99",
    "deletes_by_non_holders",
    "deletes_outside_lease",
    "failed_admissions",
    "failed_admissions_after_detection",
    "failed_admissions_during",
    "force_delete_after_not_ready",
    "lease_failover",
    "lease_handover_gap",
    "lease_overlaps",
    "lease_token_regressions",
    "lease_tokens_kept",
    "lost_acknowledged_writes",
    "names_resolved_again",
    "not_ready_detection",
    "pdb_budget_exceeded",
    "pod_ready_elsewhere",
    "pods_running_twice",
    "ready_elsewhere",
    "write_error_window",
    "zone_force_delete",
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


# The suite watches nodes and pods on separate streams: a controller that acts on the very
# NotReady update can have its delete delivered on the pod stream a moment before the node
# stream delivers that update. Within this window the delete counts as immediate.
WATCH_ORDER_TOLERANCE_S = 0.5


def _first(events: Iterable[Event]) -> Event | None:
    return next(iter(events), None)


def force_delete_after_not_ready(timeline: Timeline, fault: FaultRecord,
                                 pods: Iterable[str]) -> float | None:
    """Seconds from a target node turning NotReady until each of ``pods`` on it was gone.

    ``pods`` are ``namespace/name`` of the pods that should be force-deleted; the figure is
    the slowest one. A pod that was never deleted makes it None. A delete seen up to
    ``WATCH_ORDER_TOLERANCE_S`` before the NotReady update counts as 0 s; one seen earlier
    stays negative, which the SLO reports as INVALID (the pod went before its node did).
    """
    waits: list[float | None] = []
    for pod in pods:
        created = _first(timeline.select("pod_scheduled", pod))
        node = created.detail.get("node", "") if created else ""
        not_ready = _not_ready_at(timeline, node, fault.injected_at) if node in fault.targets \
            else None
        deleted = _first(timeline.select("pod_deleted", pod, after=fault.injected_at))
        wait = deleted.t - not_ready if deleted and not_ready is not None else None
        waits.append(0.0 if wait is not None and -WATCH_ORDER_TOLERANCE_S <= wait < 0 else wait)
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


def ready_elsewhere(timeline: Timeline, fault: FaultRecord, prefix: str) -> float | None:
    """Seconds from injection until some pod whose name starts with ``prefix`` (``ns/core-``:
    any pod of a workload, whatever its name) is Ready on a node the fault did not hit."""
    ready = _first(e for e in timeline.select("pod_ready", after=fault.injected_at)
                   if e.subject.startswith(prefix) and e.detail.get("node") not in fault.targets)
    return ready.t - fault.injected_at if ready else None


def names_resolved_again(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Seconds from ``fault``'s revert until every resolver pod that lost its name lookups
    during it (``pod_readiness`` ready=False) resolves again (ready=True); None if it was
    not reverted, no pod lost them, or one never got them back."""
    if fault.reverted_at is None:
        return None
    end = fault.reverted_at
    lost = {e.subject for e in timeline.select("pod_readiness", after=fault.injected_at)
            if e.t <= end and e.detail.get("ready") == "False"}
    back = [_first(e for e in timeline.select("pod_readiness", after=end)
                   if e.subject == pod and e.detail.get("ready") == "True") for pod in lost]
    if not back or any(e is None for e in back):
        return None
    return max(e.t for e in back if e is not None) - end


def lease_failover(timeline: Timeline, fault: FaultRecord, lease: str) -> float | None:
    """Seconds from injection until the Lease is held by someone other than the holder then."""
    before = [e for e in timeline.select("lease_holder", lease) if e.t <= fault.injected_at]
    old = before[-1].detail.get("holder", "") if before else ""
    new = _first(e for e in timeline.select("lease_holder", lease, after=fault.injected_at)
                 if e.detail.get("holder") not in ("", old))
    return new.t - fault.injected_at if new else None


def write_error_window(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Longest stretch during the fault from a failed write to the next acknowledged one.

    Reads ``write_acknowledged`` / ``write_failed`` events (a background writer's) from
    injection on; 0 when writes never failed. None without an acknowledged write after
    injection, or when a run of failures was never followed by an acknowledged write.
    """
    window, failing_since, acknowledged = 0.0, None, False
    for event in timeline.select(after=fault.injected_at):
        if event.kind == "write_failed" and failing_since is None:
            failing_since = event.t
        elif event.kind == "write_acknowledged":
            acknowledged = True
            if failing_since is not None:
                window, failing_since = max(window, event.t - failing_since), None
    return window if acknowledged and failing_since is None else None


def lost_acknowledged_writes(timeline: Timeline) -> float | None:
    """Acknowledged writes not readable afterwards (``write_lost`` events).

    None unless the writer verified its writes (a ``writes_verified`` event).
    """
    if timeline.first("writes_verified") is None:
        return None
    return float(sum(1 for _ in timeline.select("write_lost")))


def deletes_by_non_holders(deletions: Iterable[PodDeletion],
                           writes: Iterable[LeaseRequest] | None, *, users_prefix: str,
                           expiry: bool = False) -> float | None:
    """Audited deletes by a controller replica made while it was not the Lease's holder of
    record by the API server's order (``expiry``: also while its own last Lease write's
    duration had run out unrenewed): ``attribution.deletes_by_non_holders``, no clock
    tolerance. None without the audited Lease writes, when there is neither a delete nor a
    Lease write, or when the record cannot order a delete against a Lease write."""
    deletions = list(deletions)
    if writes is None:
        return None
    writes = list(writes)
    if not deletions and not writes:
        return None
    found, undecided = attribution.deletes_by_non_holders(
        deletions, writes, users_prefix=users_prefix, expiry=expiry)
    return None if undecided else float(len(found))


def deletes_outside_lease(deletions: Iterable[PodDeletion],
                          writes: Iterable[LeaseRequest] | None, *,
                          users_prefix: str) -> float | None:
    """Audited deletes by a replica it could not act for: not the holder of record, or its
    own last Lease write's duration run out (by the API server's clock). None as for
    ``deletes_by_non_holders``, and when the Lease writes do not state their duration."""
    writes = None if writes is None else list(writes)
    if writes is not None and any(w.duration_s is None for w in writes):
        return None
    return deletes_by_non_holders(deletions, writes, users_prefix=users_prefix, expiry=True)


def _lease(timeline: Timeline) -> LeaseHistory | None:
    if timeline.first("lease_holder") is None:
        return None
    return LeaseHistory(observations(timeline.events))


def lease_overlaps(writes: Iterable[LeaseRequest] | None) -> float | None:
    """Take-overs of the Lease before the previous holder's last write plus its stated
    duration (``attribution.early_takeovers``, the API server's clock). None without the
    audited Lease writes, or when none states its holder and duration."""
    if writes is None:
        return None
    writes = list(writes)
    if not writes or any(w.holder is None or w.duration_s is None for w in writes):
        return None
    return float(len(attribution.early_takeovers(writes)))


def lease_token_regressions(timeline: Timeline) -> float | None:
    """New tenures whose fencing token (leaseTransitions) did not grow. None without
    ``lease_holder`` events."""
    history = _lease(timeline)
    return None if history is None else float(len(history.token_regressions()))


def lease_tokens_kept(timeline: Timeline) -> bool | None:
    """Whether the Lease ever carried a fencing token (leaseTransitions); None without
    ``lease_holder`` events."""
    history = _lease(timeline)
    return None if history is None else history.tokens_kept


def _wall(timeline: Timeline, t: float) -> dt.datetime:
    return dt.datetime.fromisoformat(timeline.start_wall) + dt.timedelta(seconds=t)


def lease_handover_gap(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Seconds from the previous holder's last sign of life (its release, else its last
    renewal) to the next holder's acquire, for the first hand-over after ``fault``'s
    injection. None without one."""
    history = _lease(timeline)
    if history is None:
        return None
    since = _wall(timeline, fault.injected_at)
    after = [h for h in history.handovers() if h.next.start >= since]
    return after[0].gap_s if after else None


def failed_admissions(timeline: Timeline, faults: Iterable[FaultRecord]) -> float | None:
    """Admission attempts that failed (``admission_failed``) outside every fault's window.

    A fault still active at the end covers the rest of the timeline. None without any
    ``admission_ok``/``admission_failed`` event.
    """
    windows = [(f.injected_at, f.reverted_at if f.reverted_at is not None else float("inf"))
               for f in faults]
    attempts = [e for e in timeline.events if e.kind in ("admission_ok", "admission_failed")]
    if not attempts:
        return None
    return float(sum(1 for e in attempts if e.kind == "admission_failed"
                     and not any(start <= e.t <= end for start, end in windows)))


def _attempts_during(timeline: Timeline, fault: FaultRecord) -> list[Event]:
    end = fault.reverted_at if fault.reverted_at is not None else float("inf")
    return [e for e in timeline.select(after=fault.injected_at)
            if e.kind in ("admission_ok", "admission_failed") and e.t <= end]


def failed_admissions_during(timeline: Timeline, fault: FaultRecord) -> float | None:
    """Admission attempts that failed from ``fault``'s injection until its revert (the end
    of the timeline while active); None without any attempt in that window."""
    attempts = _attempts_during(timeline, fault)
    if not attempts:
        return None
    return float(sum(1 for e in attempts if e.kind == "admission_failed"))


#: From a zone's nodes NotReady until the Service in front of a webhook no longer sends to
#: the zone's replicas: kcm marks their pods NotReady (next node-monitor period), the
#: EndpointSlice controller drops them, kube-proxy syncs (iptables: min-sync-period 1 s).
ENDPOINTS_MARGIN_S = 5.0


def failed_admissions_after_detection(timeline: Timeline, fault: FaultRecord,
                                      margin_s: float = ENDPOINTS_MARGIN_S) -> float | None:
    """Admission attempts that failed among those sent from ``margin_s`` after the last
    target node was seen NotReady until the fault's revert (while active: the end). Before
    that, an attempt the Service sends to a frozen replica hangs until the webhook's timeout,
    whatever the webhook does. None if a target never turned NotReady or no attempt was
    sent in that window (an attempt's send time: its event time minus ``latency_s``)."""
    turned = [_not_ready_at(timeline, node, fault.injected_at) for node in fault.targets]
    if not turned or any(t is None for t in turned):
        return None
    since = max(t for t in turned if t is not None) + margin_s
    sent = [e for e in _attempts_during(timeline, fault)
            if e.t - float(e.detail.get("latency_s", "0")) >= since]
    if not sent:
        return None
    return float(sum(1 for e in sent if e.kind == "admission_failed"))


def admission_latency_p99(timeline: Timeline, fault: FaultRecord) -> float | None:
    """p99 (inclusive quantiles) of the seconds the admission attempts during ``fault``
    took, failed ones included; None without two attempts that say how long they took."""
    took = [float(e.detail["latency_s"]) for e in _attempts_during(timeline, fault)
            if "latency_s" in e.detail]
    if len(took) < 2:
        return None
    return statistics.quantiles(took, n=100, method="inclusive")[98]


def zone_force_delete(timeline: Timeline, fault: FaultRecord, pods: Iterable[str]
                      ) -> float | None:
    """Seconds from the first target node seen NotReady until the last of ``pods`` (on the
    targets) was gone: the whole failed zone handled. None if no target turned NotReady, no
    pod is given, or one was never deleted."""
    wanted = list(pods)
    turned = [t for node in fault.targets
              if (t := _not_ready_at(timeline, node, fault.injected_at)) is not None]
    if not wanted or not turned:
        return None
    gone = _max(e.t if (e := _first(timeline.select("pod_deleted", pod,
                                                      after=fault.injected_at))) else None
                for pod in wanted)
    return None if gone is None else max(0.0, gone - min(turned))


def pdb_budget_exceeded(timeline: Timeline, drain: FaultRecord, workloads: Iterable[str],
                        replicas: int, max_unavailable: int) -> float:
    """Most pods of one workload unavailable beyond its PDB during ``drain`` (0: it held).

    Workloads are pod-name prefixes (``ns/db-``). A pod is available from ``pod_ready``
    until ``pod_deleting``/``pod_deleted`` (a pod being evicted no longer counts, as for
    the PDB). The window runs from the drain's injection to the next ``workloads_ready``
    (the timeline's end without one).
    """
    start = drain.injected_at
    done = _first(timeline.select("workloads_ready", after=start))
    end = done.t if done else float("inf")
    worst = 0.0
    for prefix in workloads:
        available: set[str] = set()
        started = False
        for event in timeline.events:
            if event.t > end:
                break
            if event.t >= start and not started:  # what the drain began with
                started = True
                worst = max(worst, float(replicas - len(available) - max_unavailable))
            if event.subject.startswith(prefix):
                uid = event.detail.get("uid", event.subject)
                if event.kind == "pod_ready":
                    available.add(uid)
                elif event.kind in ("pod_deleting", "pod_deleted"):
                    available.discard(uid)
                if started:
                    worst = max(worst, float(replicas - len(available) - max_unavailable))
        if not started:
            worst = max(worst, float(replicas - len(available) - max_unavailable))
    return worst


def pods_running_twice(timeline: Timeline, fault: FaultRecord, prefix: str) -> float | None:
    """How many pods (``ns/name`` starting with ``prefix``) a node runtime sample saw running
    on two nodes at once from ``fault`` in force on (a StatefulSet pod's name is its
    identity: two of them is two writers). None where the nodes' runtimes were not recorded
    (no machines to ask: kwok's pods run nowhere); NaN, never a pass, where they were and no
    sample answered after the fault, or none while a pod of the fault's nodes was Ready
    elsewhere before the fault was reverted (the one window where both could run)."""
    if next(timeline.select("pod_runtime_recording"), None) is None:
        return None
    samples = [e.t for e in timeline.select("pod_runtime_sample", after=fault.in_force)]
    if not samples:
        return math.nan
    on_targets = {e.subject for e in timeline.select("pod_scheduled")
                  if e.t <= fault.injected_at and e.detail.get("node") in fault.targets}
    elsewhere = [e.t for e in timeline.select("pod_ready", after=fault.in_force)
                 if e.subject in on_targets and e.detail.get("node") not in fault.targets]
    if elsewhere and fault.reverted_at is not None and not any(
            min(elsewhere) <= t <= fault.reverted_at for t in samples):
        return math.nan
    return float(len({e.subject for e in timeline.select("pod_running_twice", after=fault.in_force)
                      if e.subject.startswith(prefix)}))
