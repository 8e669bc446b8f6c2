"""summary.json: the verdict is PASS only when pytest, every test and every SLO passed;
SLO results keep their one form (``SloResult``) through JUnit properties and back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.report import junit, summary
from zoneproof.runs.identity import ClusterIdentity
from zoneproof.slo import SloResult, SloStatus
from zoneproof.slo.verdict import NotJudged


def _result(name: str, status: str, measured: float | None) -> SloResult:
    return SloResult(name, SloStatus(status), measured, 5.0, "seconds", f"{name} {status}")


def _outcome(nodeid: str, outcome: str, *slos: tuple[str, str, float | None]) -> summary.ItemResult:
    properties = [junit.slo_property(_result(*s)) for s in slos]
    return summary.ItemResult(nodeid, outcome, 1.25, junit.slo_results(properties))


def _build(outcomes: list[summary.ItemResult], exit_status: int = 0) -> summary.Summary:
    return summary.build(outcomes, started="s", finished="f", duration_s=3.0,
                         versions={"zoneproof": "x"}, exit_status=exit_status)


def test_pass_needs_passing_tests_and_slos() -> None:
    doc = _build([_outcome("chaos/t.py::test[a]", "passed", ("lease-failover", "PASS", 4.2)),
                  _outcome("tests/u.py::test_skip", "skipped")]).to_dict()
    assert doc["verdict"] == "PASS" and doc["schema"] == summary.SCHEMA
    assert doc["counts"] == {"passed": 1, "skipped": 1}
    assert doc["slos"] == [{"test": "chaos/t.py::test[a]", "name": "lease-failover",
                            "status": "PASS", "observed": 4.2, "threshold": 5.0,
                            "unit": "seconds", "message": "lease-failover PASS", "pass": True}]


@pytest.mark.parametrize(("outcomes", "exit_status"), [
    ([_outcome("a", "passed", ("x", "FAIL", 9.0))], 0),
    ([_outcome("a", "passed", ("x", "NO_DATA", None))], 0),
    ([_outcome("a", "failed")], 1),
    ([_outcome("a", "error")], 1),
    ([_outcome("a", "passed")], 1),
    ([], 5),
], ids=["slo-fail", "slo-no-data", "test-failed", "error", "pytest-exit", "nothing-ran"])
def test_any_failure_fails_the_verdict(outcomes: list[summary.ItemResult], exit_status: int) -> None:
    assert _build(outcomes, exit_status).verdict == "FAIL"


def test_an_interrupted_run_or_test_is_interrupted_never_passed() -> None:
    assert _build([_outcome("a", "passed")], 2).verdict == "INTERRUPTED"
    cut = summary.build([_outcome("a", "passed"), _outcome("b", summary.INTERRUPTED)],
                        started="s", finished="f", duration_s=1.0, versions={}, exit_status=0)
    assert cut.verdict == "INTERRUPTED" and not cut.passed
    signalled = summary.build([_outcome("a", "passed")], started="s", finished="f",
                              duration_s=1.0, versions={}, exit_status=0,
                              interrupted_by="SIGTERM")
    assert signalled.to_dict()["interrupted_by"] == "SIGTERM"
    assert signalled.verdict == "INTERRUPTED"


def test_what_was_not_judged_makes_it_partial_and_loads_back(tmp_path: Path) -> None:
    gaps = [NotJudged("chaos/t.py::test[zone-outage]", "destructive: --allow-destructive"),
            NotJudged("chaos/t.py::test[webhook-down]", "not selected", asked=True)]
    built = summary.build([_outcome("a", "passed")], started="s", finished="f", duration_s=1.0,
                          versions={}, exit_status=0, not_judged=gaps)
    assert built.verdict == "PARTIAL" and not built.passed
    loaded = summary.load(summary.write(tmp_path / "summary.json", built))
    assert loaded.not_judged == tuple(gaps) and loaded.verdict == "PARTIAL"


def test_written_summary_loads_back_typed(tmp_path: Path) -> None:
    failed = _outcome("chaos/t.py::test[b]", "failed", ("x", "FAIL", 9.0))
    failed.message = "assert breached"
    built = _build([_outcome("chaos/t.py::test[a]", "passed", ("y", "PASS", 1.0)), failed], 1)
    path = summary.write(tmp_path / "r" / "summary.json", built)
    assert json.loads(path.read_text())["failures"] == [{"test": "chaos/t.py::test[b]",
                                                         "message": "assert breached"}]
    loaded = summary.load(path)
    assert loaded.verdict == "FAIL" and [o.nodeid for o in loaded.failures] == [failed.nodeid]
    assert loaded.slos == built.slos
    assert loaded.failures[0].message == "assert breached"


def test_the_clusters_tested_are_named_and_load_back(tmp_path: Path) -> None:
    tested = ClusterIdentity("users", "existing", "https://10.0.0.1:6443", "0b1c-uid", "v1.37.2")
    bed = ClusterIdentity("zp-1", "local", "https://127.0.0.1:21006", "9f2e-uid", "v1.37.2",
                          role="private bed")
    built = summary.build([_outcome("t.py::test", "passed")], started="s", finished="f",
                          duration_s=1.0, versions={}, exit_status=0, clusters=[tested, bed])
    path = summary.write(tmp_path / "summary.json", built)
    assert json.loads(path.read_text())["clusters"][0] == {
        "name": "users", "backend": "existing", "server": "https://10.0.0.1:6443",
        "kube_system_uid": "0b1c-uid", "version": "v1.37.2", "role": "under test"}
    assert summary.load(path).clusters == (tested, bed)


def test_load_refuses_what_is_not_a_summary(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="cannot read"):
        summary.load(tmp_path / "missing.json")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema": "zoneproof.dev/v1/Summary"}))
    with pytest.raises(errors.ConfigError, match="another zoneproof version"):
        summary.load(old)


def test_figure_property() -> None:
    assert junit.figure_property("x_seconds", 1.23456) == ("x_seconds", "1.235")


def test_each_tests_timing_and_suite_are_written_and_load_back(tmp_path: Path) -> None:
    """Set-up share, start and end on the run's clock, worker, suite, void runs: summary.json says where
    the time went (``timing``: per suite and per experiment) and reads back the same."""
    experiment = summary.ItemResult("chaos/test_experiments.py::test_experiment[zone-outage]",
                                    "passed", 60.0, setup_s=25.0, start_s=3.0, end_s=63.0,
                                    worker="gw1", void_runs=1)
    case = summary.ItemResult("conformance/ha_config/test_cases.py::test_case[a]", "passed",
                              1.5, start_s=0.5, end_s=2.0, worker="gw0")
    built = _build([experiment, case])
    doc = built.to_dict()
    assert doc["tests"][0] == {"test": experiment.nodeid, "outcome": "passed", "suite": "chaos",
                               "duration_s": 60.0, "setup_s": 25.0, "start_s": 3.0,
                               "end_s": 63.0, "worker": "gw1", "self_check": False,
                               "void_runs": 1}
    assert [r["suite"] for r in doc["timing"]["suites"]] == ["conformance/ha_config", "chaos"]
    assert doc["timing"]["experiments"] == [{"experiment": "zone-outage", "outcome": "passed",
                                             "duration_s": 60.0, "setup_s": 25.0,
                                             "start_s": 3.0, "end_s": 63.0, "worker": "gw1",
                                             "void_runs": 1}]
    loaded = summary.load(summary.write(tmp_path / "summary.json", built))
    assert loaded.outcomes[0] == experiment and loaded.to_dict()["timing"] == doc["timing"]


@pytest.mark.parametrize(("nodeid", "self_check", "suite", "experiment"), [
    ("chaos/test_experiments.py::test_experiment[zone-drain]", False, "chaos", "zone-drain"),
    ("chaos/test_experiments.py::test_experiment_catches_a_broken_controller[a-b]", True,
     "self-check", None),
    ("conformance/ha_controller/test_controller.py::test_x", False, "conformance/ha_controller",
     None),
    ("test_top.py::test_x", False, "test_top.py", None),
])
def test_suite_and_experiment_of_a_test(nodeid: str, self_check: bool, suite: str,
                                        experiment: str | None) -> None:
    assert summary.suite_of(nodeid, self_check=self_check) == suite
    assert summary.experiment_of(nodeid) == experiment


def test_the_summary_says_whether_the_self_check_ran() -> None:
    """Deselected (the gate without --self-check), it did not run, and the run still passes;
    a twin that ran counts, one that failed is named and fails the run."""
    experiment = _outcome("chaos/test_experiments.py::test_experiment[a]", "passed")
    twin = "chaos/test_experiments.py::test_experiment_catches_a_broken_controller[a-x]"
    without = _build([experiment])
    assert without.passed and without.to_dict()["self_check"] == {
        "ran": False, "counts": {}, "failed": []}
    passed = _build([experiment, summary.ItemResult(twin, "passed", self_check=True)])
    assert passed.passed and passed.self_check == {"ran": True, "counts": {"passed": 1},
                                                   "failed": []}
    failed = _build([experiment, summary.ItemResult(twin, "failed", self_check=True)], 1)
    assert not failed.passed and failed.self_check["failed"] == [twin]
    skipped = _build([experiment, summary.ItemResult(twin, "skipped", self_check=True)])
    assert skipped.self_check["ran"] is False, "a skipped twin proved nothing"
