"""The figures of a zone outage that takes the controller's leader and a webhook replica
down (chaos/zone-outage-components.yaml), from synthetic timelines."""

from collections.abc import Callable

import pytest

from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import Timeline
from zoneproof.slo import load_slos, metrics
from zoneproof.slo.figures import Evidence, result

TimelineOf = Callable[[list[tuple[float, str, str, dict[str, str]]]], Timeline]
OUTAGE = FaultRecord("zone-outage", (Effect.KUBELETS_STOPPED, Effect.NODES_NOT_READY),
                     ("a1", "a2"), injected_at=10.0, reverted_at=60.0)
LEASE = "zoneproof-system/zoneproof-ha-controller"


def _outage(*, new_holder_at: float | None, deleted_at: float | None = 21.0
            ) -> list[tuple[float, str, str, dict[str, str]]]:
    rows = [(1, "lease_holder", LEASE, {"holder": "hac-a"}),
            (2, "pod_scheduled", "ns/db-0", {"node": "a1"}),
            (2, "pod_scheduled", "ns/core-x", {"node": "a2"}),
            (3, "pod_scheduled", "ns/core-y", {"node": "b1"}),
            (18, "node_ready", "a2", {"status": "Unknown"}),
            (19, "node_ready", "a1", {"status": "Unknown"}),
            (20, "pod_deleted", "ns/core-x", {"node": "a2"})]
    if new_holder_at is not None:
        rows.append((new_holder_at, "lease_holder", LEASE, {"holder": "hac-b"}))
    if deleted_at is not None:
        rows.append((deleted_at, "pod_deleted", "ns/db-0", {"node": "a1"}))
    return rows


def test_the_zone_is_handled_from_its_first_node_not_ready_to_its_last_pod_gone(
        timeline_of: TimelineOf) -> None:
    timeline = timeline_of(_outage(new_holder_at=17.0))
    assert metrics.zone_force_delete(timeline, OUTAGE, ["ns/db-0", "ns/core-x"]) == 3.0
    assert metrics.zone_force_delete(timeline, OUTAGE, ["ns/db-0", "ns/never"]) is None
    assert metrics.zone_force_delete(timeline, OUTAGE, []) is None
    still = FaultRecord("zone-outage", OUTAGE.effects, ("c1",), 10.0, 60.0)
    assert metrics.zone_force_delete(timeline, still, ["ns/db-0"]) is None  # c1 never NotReady


@pytest.mark.parametrize(("holder_changed", "status", "observed"),
                         [(True, "PASS", 3.0), (False, "NO_DATA", None)])
def test_the_failover_slo_needs_the_lease_to_change_hands(
        timeline_of: TimelineOf, holder_changed: bool, status: str, observed: float | None
        ) -> None:
    """An outage that missed the leader (nobody took the Lease over) is never a pass, even
    when the pods were force-deleted in time (the leader acted from another zone)."""
    timeline = timeline_of(_outage(new_holder_at=17.0 if holder_changed else None))
    evidence = Evidence(timeline, (OUTAGE,), "ns", lease=LEASE)
    slos = load_slos()
    done = result(slos.get("components-zone-failover"), evidence)
    assert (str(done.status), done.observed) == (status, observed)
    failover = result(slos.get("components-zone-lease-failover"), evidence)
    assert str(failover.status) == ("PASS" if holder_changed else "NO_DATA")


def test_a_late_delete_breaches_the_failover_slo(timeline_of: TimelineOf) -> None:
    timeline = timeline_of(_outage(new_holder_at=17.0, deleted_at=40.0))
    done = result(load_slos().get("components-zone-failover"),
                  Evidence(timeline, (OUTAGE,), "ns", lease=LEASE))
    assert str(done.status) == "FAIL" and done.observed == 22.0


def _admissions(rows: list[tuple[float, bool, float]]) -> list[tuple[float, str, str, dict[str, str]]]:
    return [(t, "admission_ok" if ok else "admission_failed", "ns/create",
             {"operation": "create", "selected": "True", "latency_s": str(took)})
            for t, ok, took in rows]


def test_admissions_are_counted_and_timed_inside_the_outage_only(timeline_of: TimelineOf) -> None:
    timeline = timeline_of(_admissions([(5, False, 0.1), (11, True, 0.02), (12, False, 10.0),
                                        (13, True, 0.03), (61, False, 0.1)]))
    assert metrics.failed_admissions_during(timeline, OUTAGE) == 1.0
    p99 = metrics.admission_latency_p99(timeline, OUTAGE)
    assert p99 is not None and 9.7 < p99 <= 10.0
    assert metrics.failed_admissions_during(timeline_of([]), OUTAGE) is None
    assert metrics.admission_latency_p99(timeline_of(_admissions([(11, True, 0.1)])),
                                         OUTAGE) is None



def test_the_admissions_slo_counts_what_was_sent_once_the_zone_was_known_gone(
        timeline_of: TimelineOf) -> None:
    """Sent before its nodes were NotReady + the endpoints margin (19 + 5 s), an attempt may
    hang on the frozen replica: not counted; one sent after that and failing is."""
    not_ready = [(18, "node_ready", "a2", {"status": "Unknown"}),
                 (19, "node_ready", "a1", {"status": "Unknown"})]
    slo = load_slos().get("components-zone-admissions")

    def judged(rows: list[tuple[float, bool, float]]) -> tuple[str, float | None]:
        done = result(slo, Evidence(timeline_of(not_ready + _admissions(rows)), (OUTAGE,), "ns"))
        return str(done.status), done.observed

    assert judged([(23, False, 10.0), (25, True, 0.1), (30, True, 0.1)]) == ("PASS", 0.0)
    assert judged([(25, True, 0.1), (26, False, 0.1), (61, False, 0.1)]) == ("FAIL", 1.0)
    assert judged([(20, True, 0.1)]) == ("NO_DATA", None)  # nothing sent once known gone
    assert metrics.failed_admissions_after_detection(
        timeline_of(_admissions([(30, False, 0.1)])), OUTAGE) is None  # never NotReady
