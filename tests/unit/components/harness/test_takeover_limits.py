"""The Lease take-over limits: derived from the stated timings with client-go's jitter, and
the SLO defaults say the same figure."""

from __future__ import annotations

import random

from zoneproof.components.harness.controller import (
    REPLICA_JITTER,
    TAKEOVER_MARGIN_S,
    ControllerSettings,
)
from zoneproof.slo import spec


def test_kill_limit_covers_the_worst_jittered_schedule() -> None:
    s = ControllerSettings((), lease_duration_s=6, retry_period_s=1.0)
    rng = random.Random(15)

    def wait() -> float:  # client-go: wait.JitterUntil(retryPeriod, 1.2)
        return s.retry_period_s * (1 + rng.random() * REPLICA_JITTER)

    worst = max(wait() + s.lease_duration_s + wait() for _ in range(100_000))
    assert worst <= s.takeover_after_kill().seconds - TAKEOVER_MARGIN_S
    assert s.takeover_after_kill().seconds == 6 + 2 * 2.2 + TAKEOVER_MARGIN_S
    assert "jitter 1.2" in s.takeover_after_kill().derivation


def test_release_limit_is_one_jittered_retry() -> None:
    s = ControllerSettings((), retry_period_s=1.0)
    assert s.takeover_after_release().seconds == 2.2 + TAKEOVER_MARGIN_S


def test_slo_default_is_the_derived_limit() -> None:
    slo = spec.load_slos().get("lease-failover")
    limit = ControllerSettings(()).takeover_after_kill()
    assert slo.max == limit.seconds
    assert "jitter 1.2" in slo.description
