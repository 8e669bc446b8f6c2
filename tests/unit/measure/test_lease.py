"""The Lease history model on hand-made observations: windows of ability, hand-over gaps
and fencing tokens (who held it at a delete is the audit record's: test_audit_order)."""

import datetime as dt

from zoneproof.measure import lease
from zoneproof.measure.lease import LeaseHistory, LeaseObservation
from zoneproof.measure.timeline import Event

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
DURATION = 15.0


def _at(s: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def _holder(s: float, holder: str) -> LeaseObservation:
    return LeaseObservation(_at(s), holder, duration_s=DURATION)


def _renewed(s: float, holder: str) -> LeaseObservation:
    return LeaseObservation(_at(s), holder, renewal=True, duration_s=DURATION)


def _a_renews_until(last: float) -> list[LeaseObservation]:
    return [_holder(0, "a"), *(_renewed(s, "a") for s in range(1, int(last) + 1))]


def test_with_renewals_a_holder_can_act_until_its_last_renewal_plus_the_duration() -> None:
    history = LeaseHistory([*_a_renews_until(3), _holder(20, "b"), _renewed(21, "b")])
    a, b = history.tenures
    assert (a.holder, a.start, a.end, a.last_renewed, a.able_until) == (
        "a", _at(0), _at(20), _at(3), _at(18))
    assert (b.holder, b.end, b.able_until) == ("b", None, _at(36))
    (handover,) = history.handovers()
    assert (handover.gap_s, handover.slack_s) == (17.0, 2.0)


def test_a_take_over_before_the_previous_holder_expired_has_a_negative_slack() -> None:
    history = LeaseHistory([*_a_renews_until(3), _holder(10, "b")])
    assert history.handovers()[0].slack_s == -8.0


def test_a_release_ends_the_window_at_once() -> None:
    history = LeaseHistory([*_a_renews_until(3), _holder(5, ""), _holder(5.5, "b")])
    a, _ = history.tenures
    assert a.released and a.able_until == _at(5)
    (handover,) = history.handovers()
    assert (handover.gap_s, handover.slack_s) == (0.5, 0.5)


def test_without_renewals_windows_run_from_change_to_change() -> None:
    history = LeaseHistory([_holder(0, "a"), _holder(10, ""), _holder(12, "b")])
    a, b = history.tenures
    assert (a.able_until, b.able_until) == (_at(10), None)  # durations ignored
    (handover,) = history.handovers()
    assert handover.gap_s == 2.0


def test_a_release_after_expiry_does_not_extend_the_window() -> None:
    """The acts-on-expired-lease replica releases the Lease on its way out, long after it
    expired: its window ended at the expiry."""
    history = LeaseHistory([
        LeaseObservation(_at(0), "a", duration_s=DURATION, renewals_recorded=True),
        LeaseObservation(_at(DURATION + 5), "", duration_s=1.0, renewals_recorded=True)])
    (tenure,) = history.tenures
    assert tenure.released and tenure.able_until == _at(DURATION)


def test_a_recorder_that_records_renewals_makes_a_silent_holder_expire() -> None:
    """No renewal seen, but the recorder says it records them: the holder's Lease expired
    at its acquire plus the duration."""
    silent = LeaseHistory([LeaseObservation(_at(0), "a", duration_s=DURATION,
                                            renewals_recorded=True)])
    assert silent.tenures[0].able_until == _at(DURATION)
    events = [Event(0, _at(0).isoformat(), "lease_holder", "ns/l",
                    {"holder": "a", "duration_s": "6", "renewals": "recorded"})]
    assert lease.renewals_recorded(events) and lease.observations(events)[0].renewals_recorded


def test_observations_come_from_holder_and_renewal_events_only() -> None:
    events = [
        Event(2, _at(2).isoformat(), "lease_renewed", "ns/l", {"holder": "a", "duration_s": "15"}),
        Event(0, _at(0).isoformat(), "lease_holder", "ns/l", {"holder": "a", "transitions": "0"}),
        Event(1, _at(1).isoformat(), "node_ready", "n", {"status": "True"}),
    ]
    assert lease.observations(events) == [
        LeaseObservation(_at(0), "a", transitions=0),
        LeaseObservation(_at(2), "a", renewal=True, duration_s=15.0)]


def test_the_fencing_token_must_grow_with_every_new_tenure() -> None:
    def seen(s: float, holder: str, token: int) -> LeaseObservation:
        return LeaseObservation(_at(s), holder, transitions=token)

    good = LeaseHistory([seen(0, "a", 0), seen(5, "", 0), seen(6, "b", 1), seen(9, "a", 2)])
    assert good.token_regressions() == []
    (split,) = LeaseHistory([seen(0, "a", 3), seen(6, "b", 3)]).token_regressions()
    assert (split[0].holder, split[1].holder) == ("a", "b")
