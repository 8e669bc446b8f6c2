"""Figures from synthetic timelines: values, and None (never a silent pass) when data lacks."""

from collections.abc import Callable

from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import Timeline
from zoneproof.slo import metrics

TimelineOf = Callable[[list[tuple[float, str, str, dict[str, str]]]], Timeline]


FAULT = FaultRecord("zone-outage", (Effect.NODES_NOT_READY,), ("a1", "a2"), injected_at=10.0,
                    reverted_at=60.0)


def test_not_ready_detection_is_the_slowest_target(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(1, "node_ready", "a1", {"status": "True"}),
                             (18, "node_ready", "a1", {"status": "Unknown"}),
                             (19.5, "node_ready", "a2", {"status": "Unknown"})])
    assert metrics.not_ready_detection(timeline, FAULT) == 9.5


def test_not_ready_detection_none_if_a_target_never_went_down(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(18, "node_ready", "a1", {"status": "Unknown"})])
    assert metrics.not_ready_detection(timeline, FAULT) is None


def test_force_delete_after_not_ready(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(2, "pod_scheduled", "ns/p", {"node": "a1"}),
                             (18, "node_ready", "a1", {"status": "Unknown"}),
                             (18.4, "pod_deleted", "ns/p", {"node": "a1"})])
    figure = metrics.force_delete_after_not_ready(timeline, FAULT, ["ns/p"])
    assert figure is not None and round(figure, 3) == 0.4
    assert metrics.force_delete_after_not_ready(timeline, FAULT, ["ns/never-deleted"]) is None


def test_force_delete_seen_just_before_not_ready_counts_as_immediate(
        timeline_of: TimelineOf) -> None:
    """The pod and node watches are separate streams: a delete delivered 0.4 ms before the
    NotReady update it acted on is 0 s, not an invalid negative figure (CI, stop 20)."""
    timeline = timeline_of([(2, "pod_scheduled", "ns/p", {"node": "a1"}),
                             (17.9996, "pod_deleted", "ns/p", {"node": "a1"}),
                             (18, "node_ready", "a1", {"status": "Unknown"})])
    assert metrics.force_delete_after_not_ready(timeline, FAULT, ["ns/p"]) == 0.0


def test_force_delete_long_before_not_ready_stays_negative(timeline_of: TimelineOf) -> None:
    """A pod gone seconds before its node was NotReady was not force-deleted after NotReady:
    the figure stays negative so the SLO reports it INVALID, never a pass."""
    timeline = timeline_of([(2, "pod_scheduled", "ns/p", {"node": "a1"}),
                             (15, "pod_deleted", "ns/p", {"node": "a1"}),
                             (18, "node_ready", "a1", {"status": "Unknown"})])
    figure = metrics.force_delete_after_not_ready(timeline, FAULT, ["ns/p"])
    assert figure is not None and figure < 0


def test_pod_ready_elsewhere_ignores_readiness_on_a_hit_node(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(12, "pod_ready", "ns/web-0", {"node": "a1", "uid": "1"}),
                             (31, "pod_ready", "ns/web-0", {"node": "b1", "uid": "2"})])
    assert metrics.pod_ready_elsewhere(timeline, FAULT, ["ns/web-0"]) == 21.0


def test_ready_elsewhere_takes_any_pod_of_a_workload(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(5, "pod_ready", "ns/core-x", {"node": "b1"}),
                             (12, "pod_ready", "ns/core-y", {"node": "a2"}),
                             (14, "pod_ready", "ns/core-z", {"node": "c1"})])
    assert metrics.ready_elsewhere(timeline, FAULT, "ns/core-") == 4.0
    assert metrics.ready_elsewhere(timeline, FAULT, "ns/db-") is None


def test_lease_failover_needs_a_new_holder(timeline_of: TimelineOf) -> None:
    lease = "default/l"
    timeline = timeline_of([(1, "lease_holder", lease, {"holder": "r0"}),
                             (12, "lease_holder", lease, {"holder": ""}),
                             (16, "lease_holder", lease, {"holder": "r1"})])
    assert metrics.lease_failover(timeline, FAULT, lease) == 6.0
    only_release = timeline_of([(1, "lease_holder", lease, {"holder": "r0"}),
                                 (12, "lease_holder", lease, {"holder": ""})])
    assert metrics.lease_failover(only_release, FAULT, lease) is None


DRAIN = FaultRecord("drain-zone", (Effect.NODES_CORDONED, Effect.NODES_DRAINED), ("a1",),
                    injected_at=10.0, reverted_at=40.0)


def _drain(timeline_of: TimelineOf, pods_after: list[tuple[float, str, str, str]]) -> Timeline:
    """Three db pods Ready, a drain from t=10, then ``pods_after`` (t, kind, pod, uid)."""
    ready = [(float(i), "pod_ready", f"ns/db-{i}", {"uid": f"u{i}"}) for i in range(3)]
    return timeline_of([*ready, (10, "fault_injected", "drain-zone", {}),
                         *((t, kind, pod, {"uid": uid}) for t, kind, pod, uid in pods_after),
                         (30, "workloads_ready", "ns", {}),
                         (31, "pod_deleting", "ns/db-1", {"uid": "u1"}),
                         (31.5, "pod_deleting", "ns/db-2", {"uid": "u2"})])


def test_pdb_budget_held_when_evictions_wait_for_replacements(timeline_of: TimelineOf) -> None:
    timeline = _drain(timeline_of, [
        (11, "pod_deleting", "ns/db-0", "u0"), (14, "pod_ready", "ns/db-0", "n0"),
        (15, "pod_deleting", "ns/db-1", "u1"), (18, "pod_ready", "ns/db-1", "n1")])
    assert metrics.pdb_budget_exceeded(timeline, DRAIN, ["ns/db-"], 3, 1) == 0.0


def test_pdb_budget_exceeded_counts_extra_unavailable_pods(timeline_of: TimelineOf) -> None:
    timeline = _drain(timeline_of, [
        (11, "pod_deleting", "ns/db-0", "u0"), (11.2, "pod_deleted", "ns/db-1", "u1"),
        (14, "pod_ready", "ns/db-0", "n0"), (14, "pod_ready", "ns/db-1", "n1")])
    assert metrics.pdb_budget_exceeded(timeline, DRAIN, ["ns/db-"], 3, 1) == 1.0
    assert metrics.pdb_budget_exceeded(timeline, DRAIN, ["ns/core-"], 3, 1) == 2.0, \
        "no core pod was ever Ready"


def test_pdb_budget_counts_what_the_drain_began_with(timeline_of: TimelineOf) -> None:
    """Pods already unavailable when the drain starts count, even with no event after it."""
    timeline = timeline_of([(1, "pod_ready", "ns/db-0", {"uid": "u0"})])
    assert metrics.pdb_budget_exceeded(timeline, DRAIN, ["ns/db-"], 3, 1) == 1.0


def test_names_resolved_again_is_the_last_resolver_back_after_the_revert(
        timeline_of: TimelineOf) -> None:
    outage = FaultRecord("dns-outage", (Effect.NAMES_UNRESOLVED,), ("kube-system/coredns",),
                         10.0, 40.0)
    rows = [(1, "pod_readiness", p, {"ready": "True"}) for p in ("ns/r-1", "ns/r-2")] + [
        (12, "pod_readiness", "ns/r-1", {"ready": "False"}),
        (13, "pod_readiness", "ns/r-2", {"ready": "False"}),
        (46, "pod_readiness", "ns/r-1", {"ready": "True"})]
    assert metrics.names_resolved_again(timeline_of(rows), outage) is None, "r-2 never back"
    back = timeline_of([*rows, (52.5, "pod_readiness", "ns/r-2", {"ready": "True"})])
    assert metrics.names_resolved_again(back, outage) == 12.5
    unreverted = FaultRecord("dns-outage", (Effect.NAMES_UNRESOLVED,), ("kube-system/coredns",),
                             10.0, None)
    assert metrics.names_resolved_again(back, unreverted) is None
    never_lost = timeline_of(rows[:2])
    assert metrics.names_resolved_again(never_lost, outage) is None, "nothing lost: no figure"
