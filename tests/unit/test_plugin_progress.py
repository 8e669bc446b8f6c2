"""Progress lines of a run driven by the zoneproof command (issue 30 item 2): each chaos
experiment as it starts and ends, each suite when its last test has reported, every line with
the time since the command started; none in a plain pytest run (pytester)."""

from __future__ import annotations

import time

import pytest

TESTS = {
    "chaos/test_experiments.py": """
import pytest

@pytest.mark.parametrize("name", ["zone-outage", "webhook-down"])
def test_experiment(name):
    assert name != "webhook-down"
""",
    "conformance/ha_config/test_cases.py": """
import pytest

def test_one():
    pass

@pytest.mark.skip(reason="not here")
def test_two():
    pass
""",
}


def _suites(pytester: pytest.Pytester) -> None:
    for path, body in TESTS.items():
        target = pytester.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["alone", "xdist"])
def test_a_run_of_the_command_shows_experiments_and_suites(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]) -> None:
    _suites(pytester)
    monkeypatch.setenv("ZONEPROOF_STARTED", f"{time.time() - 65:.3f}")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers)
    result.stdout.fnmatch_lines_random([
        "zoneproof: [[]1:??] collected chaos 2, conformance/ha_config 2",
        "zoneproof: [[]1:??] experiment zone-outage: started",
        "zoneproof: [[]1:??] experiment zone-outage: PASSED in *.* s",
        "zoneproof: [[]1:??] experiment webhook-down: FAILED in *.* s",
        "zoneproof: [[]1:??] suite chaos done in 0:0?: 1 failed, 1 passed",
        "zoneproof: [[]1:??] suite conformance/ha_config done in 0:0?: 1 passed, 1 skipped",
    ])


def test_a_plain_pytest_run_shows_none(pytester: pytest.Pytester,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _suites(pytester)
    monkeypatch.delenv("ZONEPROOF_STARTED", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert "experiment zone-outage" not in result.stdout.str()
