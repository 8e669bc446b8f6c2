"""Evaluating a measured value: a missing value fails unless allowed (no silent pass)."""

import math

from zoneproof.slo import Slo, SloStatus, evaluate

SLO = Slo(name="s", metric="m", max=5.0, unit="seconds")


def test_within_and_at_the_bound_pass() -> None:
    assert evaluate(SLO, 4.2).status is SloStatus.PASS
    assert evaluate(SLO, 5.0).met


def test_over_the_bound_fails_with_both_numbers() -> None:
    result = evaluate(SLO, 7.5)
    assert result.status is SloStatus.FAIL
    assert "7.5" in result.message and "5" in result.message


def test_no_data_fails_unless_allowed() -> None:
    assert evaluate(SLO, None).status is SloStatus.NO_DATA
    assert not evaluate(SLO, None).met
    allowed = Slo(name="s", metric="m", max=5.0, unit="seconds", allow_no_data=True)
    assert evaluate(allowed, None).met


def test_nan_and_negative_are_invalid() -> None:
    assert evaluate(SLO, math.nan).status is SloStatus.INVALID
    assert evaluate(SLO, -1).status is SloStatus.INVALID
