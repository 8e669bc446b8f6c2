"""Figures of the chaos experiments: write error window, lost writes, non-holder deletes,
the Lease model's figures, failed admissions; None (never a silent pass) when the events
are missing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import PodDeletion, Timeline
from zoneproof.slo import metrics

TimelineOf = Callable[[list[tuple[float, str, str, dict[str, str]]]], Timeline]

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


FAULT = FaultRecord("kill-etcd-member", (Effect.ETCD_MEMBERS_DOWN,), ("etcd-0",),
                    injected_at=10.0, reverted_at=20.0)
OK, FAILED = "write_acknowledged", "write_failed"


def test_write_error_window_is_the_longest_failing_stretch(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(9, FAILED, "w0", {}), (9.5, OK, "w1", {}), (10.2, FAILED, "w2", {}),
                             (10.4, FAILED, "w3", {}), (11.0, OK, "w4", {}), (12, FAILED, "w5", {}),
                             (12.3, OK, "w6", {})])
    figure = metrics.write_error_window(timeline, FAULT)
    assert figure is not None and round(figure, 3) == 0.8


def test_write_error_window_zero_without_failures_none_without_recovery(timeline_of: TimelineOf) -> None:
    assert metrics.write_error_window(timeline_of([(11, OK, "w", {})]), FAULT) == 0.0
    assert metrics.write_error_window(timeline_of([(11, OK, "w", {}), (12, FAILED, "x", {})]),
                                      FAULT) is None
    assert metrics.write_error_window(timeline_of([(5, OK, "w", {})]), FAULT) is None


def test_lost_writes_need_verification(timeline_of: TimelineOf) -> None:
    assert metrics.lost_acknowledged_writes(timeline_of([(1, OK, "w0", {})])) is None
    timeline = timeline_of([(1, OK, "w0", {}), (2, "write_lost", "w0", {}),
                             (3, "writes_verified", "ns", {})])
    assert metrics.lost_acknowledged_writes(timeline) == 1.0


def test_deletes_by_non_holders(timeline_of: TimelineOf) -> None:
    timeline = timeline_of([(1, "lease_holder", "default/l", {"holder": "zp-hac-0"}),
                             (10, "lease_holder", "default/l", {"holder": "zp-hac-1"})])

    def delete(at_s: float, user: str) -> PodDeletion:
        return PodDeletion(T0 + dt.timedelta(seconds=at_s), user, "ns", "p", 200)

    fenced = [delete(5, "zp-hac-0"), delete(12, "zp-hac-1")]
    assert metrics.deletes_by_non_holders(timeline, fenced, users_prefix="zp-hac") == 0.0
    rogue = [*fenced, delete(5, "zp-hac-1")]
    assert metrics.deletes_by_non_holders(timeline, rogue, users_prefix="zp-hac") == 1.0
    assert metrics.deletes_by_non_holders(timeline_of([]), rogue, users_prefix="zp-hac") == 3.0
    assert metrics.deletes_by_non_holders(timeline_of([]), [], users_prefix="zp-hac") is None


def test_failed_admissions_outside_fault_windows(timeline_of: TimelineOf) -> None:
    down = FaultRecord("stop-webhook", (Effect.WEBHOOK_DOWN,), ("url",), injected_at=10.0,
                       reverted_at=20.0)
    timeline = timeline_of([(5, "admission_ok", "a", {}), (12, "admission_failed", "b", {}),
                             (25, "admission_failed", "c", {})])
    assert metrics.failed_admissions(timeline, [down]) == 1.0
    assert metrics.failed_admissions(timeline_of([]), [down]) is None
    still_down = FaultRecord("stop-webhook", (Effect.WEBHOOK_DOWN,), ("url",), injected_at=10.0,
                             reverted_at=None)
    assert metrics.failed_admissions(timeline, [still_down]) == 0.0


def _lease(t: float, holder: str, kind: str = "lease_holder", token: int = 0
           ) -> tuple[float, str, str, dict[str, str]]:
    return (t, kind, "default/l", {"holder": holder, "duration_s": "6", "transitions": str(token)})


def _renewals(holder: str, *times: float, token: int = 0) -> list[tuple[float, str, str,
                                                                           dict[str, str]]]:
    return [_lease(t, holder, "lease_renewed", token) for t in times]


def _delete(at_s: float, user: str) -> PodDeletion:
    return PodDeletion(T0 + dt.timedelta(seconds=at_s), user, "ns", "p", 200)


def test_a_holder_acting_on_its_expired_lease_is_caught_only_by_the_expiry_model(
        timeline_of: TimelineOf) -> None:
    """zp-hac-0 acquires at 1, renews until 3, then stops renewing; nobody takes over."""
    timeline = timeline_of([_lease(1, "zp-hac-0"), *_renewals("zp-hac-0", 2, 3)])
    late = [_delete(5, "zp-hac-0"), _delete(20, "zp-hac-0")]  # expired at 3 + 6 = 9
    assert metrics.deletes_by_non_holders(timeline, late, users_prefix="zp-hac") == 0.0
    assert metrics.deletes_outside_lease(timeline, late, users_prefix="zp-hac") == 1.0
    unrenewed = timeline_of([_lease(1, "zp-hac-0")])
    assert metrics.deletes_outside_lease(unrenewed, late, users_prefix="zp-hac") is None, \
        "without renewals the model cannot know when a Lease expired"


def test_a_holder_that_never_renews_is_able_only_until_its_acquire_plus_the_duration(
        timeline_of: TimelineOf) -> None:
    """The acts-on-expired-lease variant with one replica: zp-hac-0 acquires at 1 and never
    renews; the recorder says it records renewals, so the Lease expired at 1 + 6 = 7."""
    recorded = {"renewals": "recorded"}
    t, kind, subject, detail = _lease(1, "zp-hac-0")
    timeline = timeline_of([(t, kind, subject, {**detail, **recorded})])
    late = [_delete(3, "zp-hac-0"), _delete(12, "zp-hac-0")]
    assert metrics.deletes_outside_lease(timeline, late, users_prefix="zp-hac") == 1.0
    assert metrics.lease_overlaps(timeline) == 0.0


def test_lease_overlaps_and_fencing_tokens(timeline_of: TimelineOf) -> None:
    early = timeline_of([_lease(1, "zp-hac-0"), *_renewals("zp-hac-0", 2, 3),
                         _lease(5, "zp-hac-1", token=1)])  # could act until 9
    assert metrics.lease_overlaps(early) == 1.0
    waited = timeline_of([_lease(1, "zp-hac-0"), *_renewals("zp-hac-0", 2, 3),
                          _lease(9.3, "zp-hac-1", token=1)])
    assert metrics.lease_overlaps(waited) == 0.0
    assert metrics.lease_token_regressions(waited) == 0.0
    same_token = timeline_of([_lease(1, "zp-hac-0"), _lease(9.3, "zp-hac-1", token=0)])
    assert metrics.lease_token_regressions(same_token) == 1.0
    assert metrics.lease_overlaps(same_token) is None, "no renewals: overlaps unknowable"
    assert metrics.lease_token_regressions(timeline_of([])) is None


def test_handover_gap_after_the_fault(timeline_of: TimelineOf) -> None:
    killed = FaultRecord("kill-controller-leader", (Effect.CONTROLLER_LEADER_LOST,),
                         ("zp-hac-0",), injected_at=10.0, reverted_at=30.0)
    timeline = timeline_of([_lease(1, "zp-hac-0"), *_renewals("zp-hac-0", *range(2, 10)),
                            _lease(16.5, "zp-hac-1", token=1), *_renewals("zp-hac-1", 17)])
    assert metrics.lease_handover_gap(timeline, killed) == 7.5  # last renewal 9 → 16.5
    assert metrics.lease_handover_gap(timeline_of([_lease(1, "zp-hac-0")]), killed) is None
