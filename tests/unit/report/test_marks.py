"""The measured events a timeline figure marks, and the SLO values their labels carry."""

from __future__ import annotations

from pathlib import Path

from zoneproof.faults import FaultRecord
from zoneproof.faults.effects import Effect
from zoneproof.measure import Timeline
from zoneproof.report import marks, plots
from zoneproof.slo import SloResult, SloStatus


def zone_outage() -> tuple[Timeline, FaultRecord]:
    """Zone a (a1, a2) stops at 10 s, back at 50 s; db-0 moves from a1 to b1, the Lease from r0
    (on zone a) to r1."""
    steps: list[tuple[float, str, str, dict[str, str]]] = []
    for node, zone in (("a1", "zone-a"), ("a2", "zone-a"), ("b1", "zone-b"), ("b2", "zone-b"),
                       ("c1", "zone-c"), ("c2", "zone-c")):
        steps.append((0.5, "node_ready", node, {"status": "True", "zone": zone}))
    steps += [(1.0, "lease_holder", "default/l", {"holder": "r0"}),
              (2.0, "pod_scheduled", "ns/db-0", {"uid": "u0", "node": "a1"}),
              (3.0, "pod_ready", "ns/db-0", {"uid": "u0", "node": "a1"}),
              (2.0, "pod_scheduled", "ns/db-1", {"uid": "u1", "node": "c1"}),
              (3.5, "pod_ready", "ns/db-1", {"uid": "u1", "node": "c1"}),
              (17.2, "node_ready", "a1", {"status": "Unknown", "zone": "zone-a"}),
              (17.4, "node_ready", "a2", {"status": "Unknown", "zone": "zone-a"}),
              (16.1, "lease_holder", "default/l", {"holder": "r1"}),
              (18.3, "pod_deleted", "ns/db-0", {"uid": "u0"}),
              (18.9, "pod_scheduled", "ns/db-0", {"uid": "u2", "node": "b1"}),
              (24.6, "pod_ready", "ns/db-0", {"uid": "u2", "node": "b1"}),
              (52.0, "node_ready", "a1", {"status": "True", "zone": "zone-a"}),
              (52.5, "node_ready", "a2", {"status": "True", "zone": "zone-a"})]
    steps.sort(key=lambda s: s[0])
    times = iter([0.0, *(s[0] for s in steps)])
    timeline = Timeline(clock=lambda: next(times))
    for _, kind, subject, detail in steps:
        timeline.add(kind, subject, **detail)
    return timeline, FaultRecord("zone-outage", (Effect.NODES_NOT_READY,), ("a1", "a2"), injected_at=10.0,
                                 reverted_at=50.0)


SLOS = [SloResult("node-not-ready-detection", SloStatus.PASS, 7.2, 18.0, "seconds", ""),
        SloResult("ha-controller-force-delete", SloStatus.PASS, 1.1, 5.0, "seconds", ""),
        SloResult("statefulset-pod-ready-elsewhere", SloStatus.PASS, 14.6, 30.0, "seconds", ""),
        SloResult("lease-failover", SloStatus.FAIL, 6.1, 5.0, "seconds", "")]


def test_every_measured_event_is_marked_with_its_slo() -> None:
    timeline, fault = zone_outage()
    found = {m.kind.what: m for m in marks.marks(timeline.events, [fault], SLOS)}
    assert {k: m.t for k, m in found.items()} == {
        "NotReady": 17.2, "first force-delete": 18.3, "Ready elsewhere": 24.6,
        "lease hand-over": 16.1}
    assert found["NotReady"].label == ("NotReady +7.2 s\nSLO node-not-ready-detection: 7.2 "
                                       "seconds ≤ 18 (PASS)")
    assert "lease-failover: 6.1 seconds > 5 (FAIL)" in found["lease hand-over"].label
    assert found["first force-delete"].panel == "workload pods"


def test_without_slo_results_marks_carry_times_only() -> None:
    timeline, fault = zone_outage()
    labels = [m.label for m in marks.marks(timeline.events, [fault])]
    assert labels[0] == "lease hand-over +6.1 s"


def test_no_fault_with_targets_no_marks() -> None:
    timeline, _ = zone_outage()
    etcd = FaultRecord("kill-etcd-member", (Effect.ETCD_MEMBERS_DOWN,), (), 10.0, 12.0)
    assert marks.marks(timeline.events, [etcd]) == []


def test_a_pod_not_on_a_target_is_not_a_force_delete() -> None:
    timeline, fault = zone_outage()
    other = FaultRecord("stop-kubelets", (Effect.NODES_NOT_READY,), ("c2",), injected_at=10.0,
                        reverted_at=50.0)
    found = {m.kind.what for m in marks.marks(timeline.events, [other])}
    assert "first force-delete" not in found and "NotReady" not in found
    assert fault.targets == ("a1", "a2")


def test_the_figure_draws_marks_and_integer_count_axes(tmp_path: Path) -> None:
    timeline, fault = zone_outage()
    written = plots.plot_timeline(timeline.events, [fault], tmp_path / "timeline",
                                  title="zone-outage", slos=SLOS)
    svg = written[1].read_text()
    for text in ("NotReady +7.2 s", "first force-delete +8.3 s", "Ready elsewhere +14.6 s",
                 "lease hand-over +6.1 s", "statefulset-pod-ready-elsewhere"):
        assert text in svg, text
    assert ">1.5<" not in svg and ">0.5<" not in svg, "count axes have whole-number ticks only"
