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
