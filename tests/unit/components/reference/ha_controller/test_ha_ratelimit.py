"""TokenBucket: burst at once, then qps; waits are handed out in order."""

from __future__ import annotations

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_controller.ratelimit import TokenBucket


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_burst_goes_at_once_then_one_per_period() -> None:
    clock = Clock()
    bucket = TokenBucket(10, 3, clock=clock, sleep=clock.sleep)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert [round(bucket.reserve(), 6) for _ in range(3)] == [0.1, 0.2, 0.3]


def test_tokens_refill_with_time_up_to_burst() -> None:
    clock = Clock()
    bucket = TokenBucket(10, 3, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        bucket.reserve()
    clock.t = 0.2  # two tokens back
    assert [bucket.reserve() for _ in range(2)] == [0.0, 0.0]
    assert bucket.reserve() > 0
    clock.t = 100.0  # refills to burst, not beyond
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() > 0


def test_acquire_sleeps_the_wait() -> None:
    clock = Clock()
    bucket = TokenBucket(4, 1, clock=clock, sleep=clock.sleep)
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == 0.25
    assert clock.slept == [0.25]


@pytest.mark.parametrize(("qps", "burst", "message"),
                         [(0, 1, "--kube-api-qps must be > 0"),
                          (1, 0, "--kube-api-burst must be >= 1")])
def test_invalid_limits_name_the_flag(qps: float, burst: int, message: str) -> None:
    with pytest.raises(errors.ConfigError, match=message):
        TokenBucket(qps, burst)
