"""summary.json: the verdict is PASS only when pytest, every test and every SLO passed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zoneproof.report import summary


def _outcome(nodeid: str, outcome: str, *slos: tuple[str, str, float | None]) -> summary.Outcome:
    rows = summary.slo_rows(nodeid, [summary.slo_property(name, status, measured, 5.0, "seconds")
                                     for name, status, measured in slos])
    return summary.Outcome(nodeid, outcome, 1.25, rows)


def _build(outcomes: list[summary.Outcome], exit_status: int = 0) -> dict[str, object]:
    return summary.build(outcomes, started="s", finished="f", duration_s=3.0,
                         versions={"zoneproof": "x"}, exit_status=exit_status)


def test_pass_needs_passing_tests_and_slos() -> None:
    doc = _build([_outcome("chaos/t.py::test[a]", "passed", ("lease-failover", "PASS", 4.2)),
                  _outcome("tests/u.py::test_skip", "skipped")])
    assert doc["verdict"] == "PASS"
    assert doc["counts"] == {"passed": 1, "skipped": 1}
    assert doc["slos"] == [{"test": "chaos/t.py::test[a]", "name": "lease-failover",
                            "status": "PASS", "target": 5.0, "measured": 4.2, "unit": "seconds",
                            "pass": True}]


@pytest.mark.parametrize(("outcomes", "exit_status"), [
    ([_outcome("a", "passed", ("x", "FAIL", 9.0))], 0),
    ([_outcome("a", "passed", ("x", "NO_DATA", None))], 0),
    ([_outcome("a", "failed")], 1),
    ([_outcome("a", "error")], 1),
    ([_outcome("a", "passed")], 2),
    ([], 5),
], ids=["slo-fail", "slo-no-data", "test-failed", "error", "pytest-exit", "nothing-ran"])
def test_any_failure_fails_the_verdict(outcomes: list[summary.Outcome], exit_status: int) -> None:
    assert _build(outcomes, exit_status)["verdict"] == "FAIL"


def test_failures_keep_their_message(tmp_path: Path) -> None:
    failed = _outcome("a", "failed")
    failed.message = "assert breached"
    path = summary.write(tmp_path / "r" / "summary.json", _build([failed], 1))
    assert json.loads(path.read_text())["failures"] == [{"test": "a", "message": "assert breached"}]
