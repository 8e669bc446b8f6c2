"""The polling helper returns the value, or times out with the last observed state."""

import itertools

import pytest

from zoneproof._util import waiting


def test_returns_value_once_done() -> None:
    counter = itertools.count()
    assert waiting.wait_for(lambda: ((n := next(counter)) >= 2, n), what="x", timeout_s=5,
                            interval_s=0.01) == 2


def test_timeout_reports_last_observed() -> None:
    with pytest.raises(waiting.WaitTimeout, match=r"waiting for the thing; last observed: 41"):
        waiting.wait_for(lambda: (False, 41), what="the thing", timeout_s=0.1, interval_s=0.02)


def test_ignored_exceptions_count_as_not_yet() -> None:
    calls = itertools.count()

    def probe() -> tuple[bool, str]:
        if next(calls) < 2:
            raise ConnectionError("refused")
        return True, "ok"

    assert waiting.wait_for(probe, what="y", timeout_s=5, interval_s=0.01,
                            ignore=(ConnectionError,)) == "ok"


def test_other_exceptions_propagate() -> None:
    def probe() -> tuple[bool, None]:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        waiting.wait_for(probe, what="z", timeout_s=1)


def test_wait_for_value_returns_the_first_value_that_is_not_none() -> None:
    answers = iter([None, None, 0.0, 5.0])
    assert waiting.wait_for_value(lambda: next(answers), what="x", timeout_s=5,
                                  interval_s=0.001) == 0.0  # 0 is a value, not "not yet"


def test_wait_for_value_times_out_naming_what() -> None:
    with pytest.raises(waiting.WaitTimeout, match="the pod Ready elsewhere"):
        waiting.wait_for_value(lambda: None, what="the pod Ready elsewhere", timeout_s=0.05,
                               interval_s=0.01)
