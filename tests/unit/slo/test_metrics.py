"""Figures from synthetic timelines: values, and None (never a silent pass) when data lacks."""

from zoneproof.faults import FaultRecord
from zoneproof.measure import Timeline
from zoneproof.slo import metrics


def _timeline(events: list[tuple[float, str, str, dict[str, str]]]) -> Timeline:
    times = iter([0.0] + [t for t, *_ in events])
    timeline = Timeline(clock=lambda: next(times))
    for _, kind, subject, detail in events:
        timeline.add(kind, subject, **detail)
    return timeline


FAULT = FaultRecord("zone-outage", ("a1", "a2"), injected_at=10.0, reverted_at=60.0)


def test_not_ready_detection_is_the_slowest_target() -> None:
    timeline = _timeline([(1, "node_ready", "a1", {"status": "True"}),
                          (18, "node_ready", "a1", {"status": "Unknown"}),
                          (19.5, "node_ready", "a2", {"status": "Unknown"})])
    assert metrics.not_ready_detection(timeline, FAULT) == 9.5


def test_not_ready_detection_none_if_a_target_never_went_down() -> None:
    timeline = _timeline([(18, "node_ready", "a1", {"status": "Unknown"})])
    assert metrics.not_ready_detection(timeline, FAULT) is None


def test_force_delete_after_not_ready() -> None:
    timeline = _timeline([(2, "pod_scheduled", "ns/p", {"node": "a1"}),
                          (18, "node_ready", "a1", {"status": "Unknown"}),
                          (18.4, "pod_deleted", "ns/p", {"node": "a1"})])
    figure = metrics.force_delete_after_not_ready(timeline, FAULT, ["ns/p"])
    assert figure is not None and round(figure, 3) == 0.4
    assert metrics.force_delete_after_not_ready(timeline, FAULT, ["ns/never-deleted"]) is None


def test_pod_ready_elsewhere_ignores_readiness_on_a_hit_node() -> None:
    timeline = _timeline([(12, "pod_ready", "ns/web-0", {"node": "a1", "uid": "1"}),
                          (31, "pod_ready", "ns/web-0", {"node": "b1", "uid": "2"})])
    assert metrics.pod_ready_elsewhere(timeline, FAULT, ["ns/web-0"]) == 21.0


def test_lease_failover_needs_a_new_holder() -> None:
    lease = "default/l"
    timeline = _timeline([(1, "lease_holder", lease, {"holder": "r0"}),
                          (12, "lease_holder", lease, {"holder": ""}),
                          (16, "lease_holder", lease, {"holder": "r1"})])
    assert metrics.lease_failover(timeline, FAULT, lease) == 6.0
    only_release = _timeline([(1, "lease_holder", lease, {"holder": "r0"}),
                              (12, "lease_holder", lease, {"holder": ""})])
    assert metrics.lease_failover(only_release, FAULT, lease) is None
