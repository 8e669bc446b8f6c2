"""The recorded register history: JSON round trip, rates, descriptions, bad files."""

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.measure.history import History, Operation, OpKind, Outcome, ReadMode, TrafficPlan

PLAN = TrafficPlan("ns", ("r-0", "r-1"), 2, 150.0, 100.0, ReadMode.INFORMER, 7)
OPS = (Operation(0, 0, "r-0", OpKind.PUT, 0.5, 0.6, Outcome.OK, "c0-0", rv="12"),
       Operation(1, 1, "r-0", OpKind.GET, 0.7, 0.7, Outcome.OK, "c0-0", rv="12"),
       Operation(2, 1, "r-1", OpKind.CAS, 1.0, 3.0, Outcome.UNKNOWN, "c1-0", "9",
                 error="ReadTimeoutError"),
       Operation(3, 0, "r-1", OpKind.DELETE, 1.5, 1.6, Outcome.FAILED, error="not sent"))
HISTORY = History(PLAN, "2026-01-01T00:00:00+00:00", OPS)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    HISTORY.save(path)
    assert History.load(path) == HISTORY
    assert len(path.read_text().splitlines()) == 1 + len(OPS) + 1  # one operation per line


def test_rate_counts_definite_outcomes_returned_in_the_window() -> None:
    assert HISTORY.rate(0.0, 1.0) == 2.0
    assert HISTORY.rate(0.0, 4.0) == 0.5  # the unknown and the failed ones do not count
    assert HISTORY.rate(1.0, 1.0) is None
    assert HISTORY.started == 0.5 and HISTORY.with_operations(()).started is None


def test_descriptions_name_the_call_and_what_came_back() -> None:
    assert OPS[0].describe() == "#0 client 0 r-0: put(c0-0) -> ok@12 [0.500-0.600 s]"
    assert OPS[1].describe() == "#1 client 1 r-0: get() -> c0-0@12 [0.700-0.700 s]"
    assert OPS[2].describe() == ("#2 client 1 r-1: cas(@9, c1-0) -> unknown (ReadTimeoutError) "
                                 "[1.000-3.000 s]")
    assert Outcome.CONFLICT.definite and not Outcome.UNKNOWN.definite


def test_a_file_that_is_not_a_history_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "timeline.json"
    path.write_text('{"start_wall": "x", "events": []}')
    with pytest.raises(errors.ConfigError, match="not a register history"):
        History.load(path)
    broken = HISTORY.to_dict()
    broken["operations"][0]["kind"] = "patch"
    with pytest.raises(errors.ConfigError, match="malformed"):
        History.from_dict(broken)
