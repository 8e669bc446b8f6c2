"""Lease leader election as a state machine: fake clock, in-memory Lease API, no sleeps."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.components.reference.ha_controller import leader
from zoneproof.components.reference.ha_controller.testing import FakeClock, FakeLeaseApi


class Candidate:
    """An elector plus what its callbacks saw."""

    def __init__(self, api: FakeLeaseApi, clock: leader.Clock, identity: str,
                 *, duration: int = 15, deadline: float = 10, retry: float = 2) -> None:
        self.lost: list[str] = []
        self.started: list[leader.Leadership] = []
        config = leader.ElectionConfig("ha", "zp", identity, duration, deadline, retry)
        self.elector = leader.LeaderElector(api, config, on_lost=self.lost.append,
                                            on_started=self.started.append, clock=clock)


@pytest.fixture
def api() -> FakeLeaseApi:
    return FakeLeaseApi()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_acquires_free_lease_by_creating_it(api: FakeLeaseApi, clock: FakeClock) -> None:
    a = Candidate(api, clock, "a")
    assert a.elector.step()
    assert a.elector.current() == leader.Leadership("a", 0)
    assert a.elector.fencing_token == 0
    assert a.started == [leader.Leadership("a", 0)]
    spec = api.spec()
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0


def test_second_create_loses_the_race(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    assert a.elector.step()
    assert not b.elector.step()
    assert b.elector.current() is None and b.started == []


def test_does_not_steal_unexpired_lease(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    a.elector.step()
    assert not b.elector.step()  # b first observes a's record now
    clock.advance(14.9)  # a is silent, but 15 s have not passed on b's clock
    assert not b.elector.step()
    assert api.spec()["holderIdentity"] == "a"


def test_takes_expired_lease_and_bumps_transitions(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    a.elector.step()
    b.elector.step()
    clock.advance(15.0)
    assert b.elector.step()
    assert b.elector.current() == leader.Leadership("b", 1)
    assert api.spec()["holderIdentity"] == "b" and api.spec()["leaseTransitions"] == 1
    # a, now silent past its deadline, no longer acts even before it notices
    assert a.elector.current() is None
    # and on its next attempt it sees b and loses for good
    calls = len(api.calls)
    assert not a.elector.step()
    assert a.lost == ["lease-held-by:b"]
    assert a.elector.done
    assert not a.elector.step()
    assert len(api.calls) == calls + 1  # the one read that showed b; nothing after


def test_expiry_counts_from_observation_not_remote_timestamps(
        api: FakeLeaseApi, clock: FakeClock) -> None:
    a = Candidate(api, clock, "a")
    a.elector.step()
    clock.advance(3600)  # a long-dead leader: b still waits a full duration from first sight
    b = Candidate(api, clock, "b")
    assert not b.elector.step()
    clock.advance(15)
    assert b.elector.step()


def test_renew_keeps_term_and_acquire_time(api: FakeLeaseApi, clock: FakeClock) -> None:
    a = Candidate(api, clock, "a")
    a.elector.step()
    first = api.spec()
    for _ in range(5):
        clock.advance(2)
        assert a.elector.step()
    spec = api.spec()
    assert spec["leaseTransitions"] == 0 and spec["holderIdentity"] == "a"
    assert spec["acquireTime"] == first["acquireTime"]
    assert spec["renewTime"] != first["renewTime"]
    assert len(a.started) == 1
    assert a.elector.current() == leader.Leadership("a", 0)


@pytest.mark.parametrize(
    "failure",
    [ApiException(status=500, reason="boom"), ApiException(status=409, reason="Conflict"),
     urllib3.exceptions.ProtocolError("reset"), ConnectionRefusedError("down")],
    ids=["500", "conflict", "protocol", "refused"],
)
def test_loses_after_renew_deadline(api: FakeLeaseApi, clock: FakeClock,
                                    failure: BaseException) -> None:
    a = Candidate(api, clock, "a")
    a.elector.step()
    api.fail = failure
    clock.advance(2)
    assert a.elector.step()  # failed renew, still inside the deadline: still leader
    clock.advance(7.9)
    assert a.elector.step() and a.lost == []
    clock.advance(0.1)  # 10 s since the last successful renew
    assert a.elector.current() is None  # gate closes on the clock alone
    assert not a.elector.step()
    assert a.lost == ["renew-deadline-exceeded"]
    api.fail = None
    assert not a.elector.step()  # done: never re-acquires, never calls back again
    assert a.lost == ["renew-deadline-exceeded"]


def test_a_renewal_that_lands_after_the_deadline_is_a_loss(
        api: FakeLeaseApi, clock: FakeClock) -> None:
    """The Gate closed at the deadline (deletes were skipped as "not leader"): a renewal
    that succeeds later must not resume leadership, or the skipped work is never done."""
    a = Candidate(api, clock, "a")
    a.elector.step()
    clock.advance(9.0)
    api.before_replace = lambda: clock.advance(1.5)  # a slow API server: lands at 10.5 s
    assert not a.elector.step()
    assert api.spec()["holderIdentity"] == "a"  # the write itself succeeded
    assert a.lost == ["renewed-after-deadline"] and a.elector.done
    assert a.elector.current() is None


def test_a_renewal_that_lands_just_in_time_keeps_the_term(
        api: FakeLeaseApi, clock: FakeClock) -> None:
    a = Candidate(api, clock, "a")
    a.elector.step()
    clock.advance(8.0)
    api.before_replace = lambda: clock.advance(1.9)  # lands at 9.9 s
    assert a.elector.step()
    assert a.lost == [] and a.elector.current() == leader.Leadership("a", 0)
    clock.advance(8.0)  # 17.9 s: 9.9 s after that renewal started (the deadline counts from there)
    assert a.elector.step() and a.lost == []


def test_conflicting_replace_is_not_leadership(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    a.elector.step()
    b.elector.step()
    clock.advance(15)

    def a_renews_first() -> None:
        api.before_replace = None
        a.elector.step()

    api.before_replace = a_renews_first
    assert not b.elector.step()  # b's write carried a stale resourceVersion
    assert api.spec()["holderIdentity"] == "a"
    assert b.elector.current() is None


def test_release_lets_standby_take_over_at_once(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    a.elector.step()
    b.elector.step()
    assert a.elector.release()
    spec = api.spec()
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    assert a.elector.current() is None and a.elector.done
    assert a.lost == []
    assert b.elector.step()  # no waiting out the 15 s
    assert b.elector.current() == leader.Leadership("b", 1)


def test_release_when_not_leader_writes_nothing(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    a.elector.step()
    b.elector.step()
    calls = len(api.calls)
    assert not b.elector.release()
    assert len(api.calls) == calls


def test_release_does_not_clobber_a_new_holder(api: FakeLeaseApi, clock: FakeClock) -> None:
    a, b = Candidate(api, clock, "a"), Candidate(api, clock, "b")
    a.elector.step()
    b.elector.step()
    clock.advance(15)
    b.elector.step()
    assert not a.elector.release()
    assert api.spec()["holderIdentity"] == "b"


def test_sees_released_lease_while_leader_as_loss(api: FakeLeaseApi, clock: FakeClock) -> None:
    a = Candidate(api, clock, "a")
    a.elector.step()
    raw = api.store[("zp", "ha")]
    raw["spec"]["holderIdentity"] = ""
    assert not a.elector.step()
    assert a.lost == ["lease-held-by:<nobody>"]


def test_wait_is_cut_short_before_the_deadline(api: FakeLeaseApi, clock: FakeClock) -> None:
    a = Candidate(api, clock, "a", duration=15, deadline=10, retry=4)
    assert a.elector._next_wait_s() == 4
    a.elector.step()
    clock.advance(8)
    assert a.elector._next_wait_s() == pytest.approx(2)
    assert a.elector._request_timeout_s(clock.monotonic()) == pytest.approx(2)


def test_micro_time_never_has_zero_microseconds() -> None:
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    assert leader._micro_time(moment).microsecond == 1
    assert leader._micro_time(moment.replace(microsecond=5)).microsecond == 5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lease_duration_s": 10, "renew_deadline_s": 10}, "must be greater than --renew-deadline"),
        ({"renew_deadline_s": 2.4, "retry_period_s": 2}, "1.2 x --retry-period"),
        ({"retry_period_s": 0}, "--retry-period must be > 0"),
        ({"lease_duration_s": 0, "renew_deadline_s": -1}, "--lease-duration must be >= 1s"),
        ({"identity": ""}, "--identity must not be empty"),
    ],
)
def test_config_validation(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"lease_name": "ha", "lease_namespace": "zp", "identity": "a"}
    with pytest.raises(errors.ConfigError, match=message):
        leader.ElectionConfig(**{**base, **kwargs})  # type: ignore[arg-type]


def test_defaults_are_client_go() -> None:
    cfg = leader.ElectionConfig("ha", "zp", "a")
    assert (cfg.lease_duration_s, cfg.renew_deadline_s, cfg.retry_period_s) == (15, 10, 2)


def test_run_loop_on_real_clock_stops_when_asked(api: FakeLeaseApi) -> None:
    a = Candidate(api, leader.SystemClock(), "a", duration=2, deadline=1, retry=0.05)
    stop = threading.Event()
    thread = threading.Thread(target=a.elector.run, args=(stop,))
    thread.start()
    try:
        waiting.wait_for(lambda: (len(api.calls) > 6, api.calls), what="a few renewals",
                         timeout_s=5, interval_s=0.02)
        assert a.elector.current() == leader.Leadership("a", 0)
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()


def test_gates_of_broken_variants(api: FakeLeaseApi, clock: FakeClock) -> None:
    assert leader.Unelected("x").current() == leader.Leadership("x", None)
    a = Candidate(api, clock, "a")
    lame = leader.LameDuckGate(a.elector)
    assert lame.current() is None
    a.elector.step()
    assert lame.current() == leader.Leadership("a", 0)
    clock.advance(11)
    assert a.elector.current() is None
    assert lame.current() == leader.Leadership("a", 0)  # stale, on purpose
