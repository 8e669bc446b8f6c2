"""Figures of the chaos experiments: write error window, lost writes, non-holder deletes,
the Lease model's figures, failed admissions; None (never a silent pass) when the events
are missing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import ApiOrder, LeaseRequest, PodDeletion, Timeline
from zoneproof.slo import SloStatus, figures, metrics
from zoneproof.slo.spec import Slo

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


def _write(at_s: float, user: str, holder: str, revision: int) -> LeaseRequest:
    at = T0 + dt.timedelta(seconds=at_s)
    return LeaseRequest(at, user, "update", 200, ApiOrder(at, at + dt.timedelta(milliseconds=5),
                                                          revision), holder, 6.0, at)


def _deletion(at_s: float, user: str, revision: int) -> PodDeletion:
    at = T0 + dt.timedelta(seconds=at_s)
    return PodDeletion(at, user, "ns", "p", 200,
                       order=ApiOrder(at, at + dt.timedelta(milliseconds=5), revision))


def test_deletes_by_non_holders_by_the_api_servers_order() -> None:
    writes = [_write(1, "zp-hac-0", "zp-hac-0", 10), _write(10, "zp-hac-1", "zp-hac-1", 20)]
    fenced = [_deletion(5, "zp-hac-0", 15), _deletion(12, "zp-hac-1", 25)]
    assert metrics.deletes_by_non_holders(fenced, writes, users_prefix="zp-hac") == 0.0
    rogue = [*fenced, _deletion(5, "zp-hac-1", 16)]
    assert metrics.deletes_by_non_holders(rogue, writes, users_prefix="zp-hac") == 1.0
    assert metrics.deletes_by_non_holders(rogue, [], users_prefix="zp-hac") == 3.0
    assert metrics.deletes_by_non_holders([], [], users_prefix="zp-hac") is None
    assert metrics.deletes_by_non_holders(rogue, None, users_prefix="zp-hac") is None, \
        "without the audited Lease writes nothing is judged (no watcher's guess)"


def test_a_holder_acting_on_its_expired_lease_is_caught_only_by_the_expiry_model() -> None:
    """zp-hac-0 renews until 3, then stops; nobody takes over: expired at 3 + 6 = 9."""
    writes = [_write(t, "zp-hac-0", "zp-hac-0", 10 + t) for t in (1, 2, 3)]
    late = [_deletion(5, "zp-hac-0", 20), _deletion(20, "zp-hac-0", 21)]
    assert metrics.deletes_by_non_holders(late, writes, users_prefix="zp-hac") == 0.0
    assert metrics.deletes_outside_lease(late, writes, users_prefix="zp-hac") == 1.0


def test_lease_overlaps_are_take_overs_before_the_holders_expiry() -> None:
    renewing = [_write(1, "zp-hac-0", "zp-hac-0", 10), _write(3, "zp-hac-0", "zp-hac-0", 11)]
    assert metrics.lease_overlaps([*renewing, _write(5, "zp-hac-1", "zp-hac-1", 12)]) == 1.0
    assert metrics.lease_overlaps([*renewing, _write(9.3, "zp-hac-1", "zp-hac-1", 12)]) == 0.0
    assert metrics.lease_overlaps(None) is None and metrics.lease_overlaps([]) is None


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


def _lease(t: float, holder: str, kind: str = "lease_holder", token: int | None = 0
           ) -> tuple[float, str, str, dict[str, str]]:
    return (t, kind, "default/l", {"holder": holder, "duration_s": "6",
                                   "transitions": "" if token is None else str(token)})


def _renewals(holder: str, *times: float, token: int = 0) -> list[tuple[float, str, str,
                                                                           dict[str, str]]]:
    return [_lease(t, holder, "lease_renewed", token) for t in times]


def test_fencing_tokens(timeline_of: TimelineOf) -> None:
    waited = timeline_of([_lease(1, "zp-hac-0"), *_renewals("zp-hac-0", 2, 3),
                          _lease(9.3, "zp-hac-1", token=1)])
    assert metrics.lease_token_regressions(waited) == 0.0
    same_token = timeline_of([_lease(1, "zp-hac-0"), _lease(9.3, "zp-hac-1", token=0)])
    assert metrics.lease_token_regressions(same_token) == 1.0
    assert metrics.lease_token_regressions(timeline_of([])) is None
    dropped = timeline_of([_lease(1, "zp-hac-0", token=2), _lease(9.3, "zp-hac-1", token=None)])
    assert metrics.lease_token_regressions(dropped) == 1.0
    assert metrics.lease_tokens_kept(dropped) is True


def test_a_lease_that_never_carries_a_token_regresses_nothing_and_is_said_so(
        timeline_of: TimelineOf) -> None:
    """The Python client's leader election leaves leaseTransitions unwritten (seed 002
    proposes the sequence number for later; contract C6 does not ask it)."""
    untokened = timeline_of([_lease(1, "zp-hac-0", token=None), _lease(5, "", token=None),
                             _lease(6, "zp-hac-1", token=None)])
    assert metrics.lease_token_regressions(untokened) == 0.0
    assert metrics.lease_tokens_kept(untokened) is False
    assert metrics.lease_tokens_kept(timeline_of([])) is None
    slo = Slo("lease-fencing-token", "lease_token_regressions", 0, "count", "")
    result = figures.result(slo, figures.Evidence(untokened, (), "ns"))
    assert result.status is SloStatus.PASS and "no fencing token kept" in result.message
    kept = timeline_of([_lease(1, "zp-hac-0", token=0), _lease(6, "zp-hac-1", token=0)])
    failed = figures.result(slo, figures.Evidence(kept, (), "ns"))
    assert failed.status is SloStatus.FAIL and "no fencing token" not in failed.message


def test_handover_gap_after_the_fault(timeline_of: TimelineOf) -> None:
    killed = FaultRecord("kill-controller-leader", (Effect.CONTROLLER_LEADER_LOST,),
                         ("zp-hac-0",), injected_at=10.0, reverted_at=30.0)
    timeline = timeline_of([_lease(1, "zp-hac-0"), *_renewals("zp-hac-0", *range(2, 10)),
                            _lease(16.5, "zp-hac-1", token=1), *_renewals("zp-hac-1", 17)])
    assert metrics.lease_handover_gap(timeline, killed) == 7.5  # last renewal 9 → 16.5
    assert metrics.lease_handover_gap(timeline_of([_lease(1, "zp-hac-0")]), killed) is None
