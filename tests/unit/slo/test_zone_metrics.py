"""Figures of zone faults from synthetic timelines."""

from __future__ import annotations

import math
from collections.abc import Callable

from zoneproof import errors
from zoneproof.cluster.interface import Capability
from zoneproof.faults import FaultRecord
from zoneproof.faults.effects import Effect, StatedTimings
from zoneproof.faults.zones import link_target
from zoneproof.measure import PodRuntimeRecorder, Timeline
from zoneproof.slo import effect_checks, metrics, zone_metrics
from zoneproof.slo.results import SloStatus, evaluate
from zoneproof.slo.spec import load_slos

Row = tuple[float, str, str, dict[str, str]]
TimelineOf = Callable[[list[Row]], Timeline]
KCM, SCHED = "kube-system/kube-controller-manager", "kube-system/kube-scheduler"


def _leader(t: float, lease: str, zone: str) -> Row:
    return (t, "control_plane_leader", lease, {"holder": f"{zone}_uid-{t}", "zone": zone})


def test_reelection_waits_for_every_lease_the_zone_held(timeline_of: TimelineOf) -> None:
    fault = FaultRecord("kill-zone-control-plane", (Effect.CONTROL_PLANE_DOWN,),
                        ("kube-apiserver-zone-a", "kube-controller-manager-zone-a"), 10.0, 40.0)
    timeline = timeline_of([_leader(1, KCM, "zone-a"), _leader(1, SCHED, "zone-a"),
                            _leader(17, KCM, "zone-b"), _leader(19.5, SCHED, "zone-c")])
    assert zone_metrics.fault_zone(timeline, fault) == "zone-a"
    assert zone_metrics.control_plane_reelection(timeline, fault) == 9.5


def test_reelection_has_no_figure_when_a_lease_never_left_or_none_was_there(
        timeline_of: TimelineOf) -> None:
    fault = FaultRecord("kill-zone-control-plane", (Effect.CONTROL_PLANE_DOWN,),
                        ("kube-apiserver-zone-a",), 10.0, 40.0)
    stuck = timeline_of([_leader(1, KCM, "zone-a"), _leader(2, SCHED, "zone-b")])
    assert zone_metrics.control_plane_reelection(stuck, fault) is None
    elsewhere = timeline_of([_leader(1, KCM, "zone-b"), _leader(2, SCHED, "zone-c")])
    assert zone_metrics.control_plane_reelection(elsewhere, fault) is None


def test_write_p99_counts_failed_writes_with_the_time_they_took(timeline_of: TimelineOf) -> None:
    fault = FaultRecord("zone-latency", (Effect.LINKS_SLOWED,), (), 10.0, 20.0)
    rows: list[Row] = [(5, "write_acknowledged", "w-0", {"seconds": "9"})]  # before: not counted
    rows += [(11 + i / 25, "write_acknowledged", f"w-{i}", {"seconds": "0.1"})
             for i in range(199)]
    rows += [(19.9, "write_failed", "w-199", {"seconds": "2.0"})]  # 1 in 200: under the p99
    assert zone_metrics.write_latency_p99(timeline_of(rows), fault) == 0.1
    rows += [(19.95, "write_failed", f"w-{n}", {"seconds": "2.0"}) for n in (200, 201)]
    assert zone_metrics.write_latency_p99(timeline_of(rows), fault) == 2.0


def test_leader_changes_count_only_during_the_fault(timeline_of: TimelineOf) -> None:
    fault = FaultRecord("zone-latency", (Effect.LINKS_SLOWED,), (), 10.0, 20.0)
    timeline = timeline_of([(1, "etcd_leader", "etcd", {"leader": "etcd-zone-a"}),
                            (12, "etcd_leader", "etcd", {"leader": ""}),
                            (13, "etcd_leader", "etcd", {"leader": "etcd-zone-b"}),
                            (25, "etcd_leader", "etcd", {"leader": "etcd-zone-c"})])
    assert zone_metrics.etcd_leader_changes(timeline, fault) == 2.0
    assert zone_metrics.etcd_leader_changes(timeline_of([]), fault) is None


def test_an_isolated_member_is_judged_by_the_writes_tried_while_cut_off(
        timeline_of: TimelineOf) -> None:
    fault = FaultRecord("zone-partition", (Effect.ETCD_MEMBERS_DOWN,), ("etcd-zone-a",),
                        10.0, 30.0)
    refused = timeline_of([(15, "member_write", "etcd-zone-a", {"ok": "False"}),
                           (16, "member_write", "etcd-zone-b", {"ok": "True"})])
    assert zone_metrics.member_writes_acknowledged(refused, fault) == 0.0
    split = timeline_of([(15, "member_write", "etcd-zone-a", {"ok": "True"})])
    assert zone_metrics.member_writes_acknowledged(split, fault) == 1.0
    assert zone_metrics.member_writes_acknowledged(timeline_of([]), fault) is None


def test_a_slowed_link_needs_a_baseline_and_a_round_trip_that_slow(
        timeline_of: TimelineOf) -> None:
    from zoneproof.cluster.spec import Timings
    from zoneproof.components.harness.controller import ControllerSettings

    timings = StatedTimings.of(Timings(), ControllerSettings(namespaces=()))
    fault = FaultRecord("zone-latency", (Effect.LINKS_SLOWED,),
                        (link_target("zone-a", "zone-b", 100),), 10.0, 30.0)

    def rtt(t: float, seconds: str, answered: str = "True") -> Row:
        return (t, "link_rtt", "zone-b", {"source": "zone-a", "seconds": seconds,
                                          "answered": answered})

    slowed = [rtt(5, "0.004"), rtt(6, "0.5"), rtt(12, "0.09"), rtt(13, "0.21")]
    (check,) = effect_checks.check([fault], timeline_of(slowed).events, timings)
    assert check.effective and check.observed_at == 13
    too_fast = [rtt(5, "0.004"), rtt(12, "0.1")]
    assert not effect_checks.check([fault], timeline_of(too_fast).events, timings)[0].effective
    no_baseline = [rtt(12, "0.5")]
    assert not effect_checks.check([fault], timeline_of(no_baseline).events, timings)[0].effective
    timed_out = [rtt(5, "0.004"), rtt(12, "10.0", answered="False")]
    assert effect_checks.check([fault], timeline_of(timed_out).events, timings)[0].effective


def _cut(in_force: float = 10.0) -> FaultRecord:
    return FaultRecord("kubelet-apiserver-cut", (Effect.KUBELETS_STOPPED, Effect.NODES_NOT_READY),
                       ("zone-a-w1",), in_force - 0.5, 60.0, in_force)


def _twice(t: float, pod: str) -> Row:
    return (t, "pod_running_twice", pod, {"nodes": "zone-a-w1,zone-b-w1"})


def test_a_pod_running_on_two_nodes_after_the_cut_counts_once(timeline_of: TimelineOf) -> None:
    sampled: list[Row] = [(t, "pod_runtime_sample", "ns", {"nodes": "3"}) for t in (12, 14, 16)]
    timeline = timeline_of([(0, "pod_runtime_recording", "ns", {}), *sampled,
                            _twice(14, "ns/db-0"), _twice(16, "ns/db-0"), _twice(16, "ns/db-1"),
                            _twice(16, "other/db-0"), _twice(5, "ns/db-2")])
    assert metrics.pods_running_twice(timeline, _cut(), "ns/") == 2.0  # db-2: before the cut
    clean = timeline_of([(0, "pod_runtime_recording", "ns", {}), *sampled])
    assert metrics.pods_running_twice(clean, _cut(), "ns/") == 0.0


def test_runs_once_has_no_figure_where_no_runtime_is_recorded_and_is_never_a_pass_unsampled(
        timeline_of: TimelineOf) -> None:
    """kwok: nothing recorded, no figure (the SLO allows it); kind with every sample failed
    after the cut: NaN (INVALID), never a pass."""
    assert metrics.pods_running_twice(timeline_of([]), _cut(), "ns/") is None
    unsampled = timeline_of([(0, "pod_runtime_recording", "ns", {}),
                             (5, "pod_runtime_sample", "ns", {"nodes": "3"})])
    assert math.isnan(metrics.pods_running_twice(unsampled, _cut(), "ns/") or 0.0)
    slo = next(s for s in load_slos().slos if s.name == "statefulset-pod-runs-once")
    assert evaluate(slo, math.nan).status is SloStatus.INVALID
    assert evaluate(slo, None).status is SloStatus.PASS  # allowed: judged where pods run
    assert evaluate(slo, 1.0).status is SloStatus.FAIL


def test_runs_once_is_invalid_when_no_sample_fell_while_a_replacement_ran_before_the_revert(
        timeline_of: TimelineOf) -> None:
    """db-0 of the cut node Ready elsewhere at 20, the cut reverted at 21 (the old pod dies
    when its kubelet hears of the delete): samples at 12 and 30 cannot say whether both ran."""
    fault = FaultRecord("kubelet-apiserver-cut", (Effect.NODES_NOT_READY,), ("zone-a-w1",),
                        9.5, 21.0, 10.0)
    rows: list[Row] = [(0, "pod_runtime_recording", "ns", {}),
                       (1, "pod_scheduled", "ns/db-0", {"node": "zone-a-w1"}),
                       (20, "pod_ready", "ns/db-0", {"node": "zone-b-w1"}),
                       (12, "pod_runtime_sample", "ns", {"nodes": "3"}),
                       (30, "pod_runtime_sample", "ns", {"nodes": "3"})]
    assert math.isnan(metrics.pods_running_twice(timeline_of(rows), fault, "ns/") or 0.0)
    seen = [*rows, (20.5, "pod_runtime_sample", "ns", {"nodes": "3"})]
    assert metrics.pods_running_twice(timeline_of(seen), fault, "ns/") == 0.0


class _Machines:
    """A cluster whose nodes' runtimes run the given pods (NodeMachines.running_pods)."""

    capabilities = frozenset({Capability.NODE_CONTAINERS})
    name, backend = "fake", "fake"

    def __init__(self, running: dict[str, list[str]]) -> None:
        self.running = running

    def nodes_by_zone(self) -> dict[str, list[str]]:
        return {"zone-a": ["a1"], "zone-b": ["b1"], "zone-c": ["c1"]}

    def running_pods(self, node: str, namespace: str) -> list[str]:
        if node not in self.running:
            raise errors.BackendError(f"{node} does not answer")
        return self.running[node]


def test_the_runtime_recorder_records_a_pod_on_two_nodes_and_no_partial_sample() -> None:
    timeline = Timeline()
    fake = _Machines({"a1": ["db-0", "web-1"], "b1": ["db-0"], "c1": ["db-1"]})
    recorder = PodRuntimeRecorder(fake, "ns")  # type: ignore[arg-type]
    recorder.timeline = timeline
    recorder.sample()
    assert [(e.kind, e.subject, e.detail) for e in timeline.events] == [
        ("pod_runtime_sample", "ns", {"nodes": "3"}),
        ("pod_running_twice", "ns/db-0", {"nodes": "a1,b1"})]
    fake.running.pop("c1")  # one node does not answer: no sample at all
    recorder.sample()
    assert len(timeline.events) == 2
