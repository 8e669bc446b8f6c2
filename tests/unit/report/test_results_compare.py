"""Past runs read back (``zoneproof results``) and compared (``zoneproof compare``): from report
directories, names under a reports root and certification bundles; regressions beyond noise
flagged, noise left alone."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from zoneproof import errors
from zoneproof.report import compare, results, summary
from zoneproof.slo import SloResult, SloStatus

CLI = [sys.executable, "-m", "zoneproof.cli.main"]
CHAOS = "chaos/test_experiments.py::test_experiment[{}]"


def _slo(name: str, observed: float | None, bound: float = 10.0) -> SloResult:
    met = observed is not None and observed <= bound
    status = SloStatus.PASS if met else SloStatus.NO_DATA if observed is None else SloStatus.FAIL
    return SloResult(name, status, observed, bound, "seconds", f"{name} {status}")


def _run(reports: Path, stamp: str, figures: dict[str, float | None],
         outcomes: dict[str, str] | None = None) -> Path:
    """A report directory ``reports/<stamp>`` whose zone-outage experiment measured ``figures``."""
    tests = [summary.ItemResult(CHAOS.format("zone-outage"), "passed", 30.0,
                             [_slo(name, value) for name, value in figures.items()])]
    tests += [summary.ItemResult(t, o, 2.0, message="assert broken" if o == "failed" else "")
              for t, o in (outcomes or {}).items()]
    built = summary.build(tests, started=f"{stamp}-start", finished=f"{stamp}-end",
                          duration_s=60.0, versions={"zoneproof": "0.1.0"},
                          exit_status=int(any(t.failed for t in tests)))
    summary.write(reports / stamp / "summary.json", built)
    return reports / stamp


BASE = {"notready-detection": 8.2, "force-delete": 0.05}
CONFORMANCE = {"conformance/ha_config/test_cases.py::test_case[a]": "passed",
               "conformance/ha_config/test_cases.py::test_case[b]": "passed"}


def test_results_of_the_newest_run_by_name_and_path(tmp_path: Path) -> None:
    _run(tmp_path, "20260101T000000Z", BASE, CONFORMANCE)
    newest = _run(tmp_path, "20260102T000000Z", BASE,
                  {**CONFORMANCE, "conformance/ha_config/test_cases.py::test_case[b]": "failed"})
    assert results.locate(None, tmp_path) == newest
    assert results.locate("20260101T000000Z", tmp_path) == tmp_path / "20260101T000000Z"
    assert results.locate(str(newest / "summary.json"), tmp_path) == newest / "summary.json"
    found = results.load(newest)
    text = "\n".join(found.text())
    assert found.name == "20260102T000000Z"
    assert "run 20260102T000000Z: FAIL" in text
    assert "notready-detection" in text and "zone-outage" in text
    assert "FAILED conformance/ha_config/test_cases.py::test_case[b]" in text
    assert "assert broken" in text
    data = found.to_dict()
    assert data["suites"] == {"chaos": {"passed": 1}, "conformance/ha_config": {"failed": 1,
                                                                                "passed": 1}}
    assert [s["name"] for s in data["slos"]] == ["notready-detection", "force-delete"]


def test_no_run_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="pass --reports"):
        results.locate(None, tmp_path)
    with pytest.raises(errors.ConfigError, match="is no run"):
        results.locate("nope", tmp_path)


def test_results_of_a_bundle_read_in_place(tmp_path: Path) -> None:
    run = _run(tmp_path, "20260101T000000Z", BASE)
    bundle = tmp_path / "acme-1.0-20260101T000000Z.certification.tar.gz"
    certification = {"verdict": "PASS", "vendor": {"vendor": "acme", "product": "ha",
                                                   "version": "1.0"}, "problems": []}
    with tarfile.open(bundle, "w:gz") as tar:
        for name, data in (("summary.json", (run / "summary.json").read_bytes()),
                           ("certification.yaml", yaml.safe_dump(certification).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    found = results.load(results.locate(str(bundle), tmp_path))
    assert found.certification is not None and found.certification["verdict"] == "PASS"
    assert "certification: PASS for ha 1.0 (acme)" in "\n".join(found.text())



@pytest.mark.parametrize(("a", "b", "change"), [
    (8.2, 8.6, "unchanged"),      # 0.4 s: under 10 % of the 10 s bound
    (0.05, 0.3, "unchanged"),     # 6x, but 0.25 s is under 10 % of the bound
    (2.0, 4.0, "regressed"),      # +2 s: over 10 % of the bound and 20 % of 2 s
    (4.0, 2.0, "improved"),
    (8.2, 12.0, "regressed"),     # PASS -> FAIL
    (12.0, 8.0, "improved"),      # FAIL -> PASS
    (8.2, None, "regressed"),     # PASS -> NO_DATA
])
def test_slo_changes_beyond_noise_are_flagged(tmp_path: Path, a: float, b: float | None,
                                              change: str) -> None:
    first = results.load(_run(tmp_path / "a", "A", {"x": a}))
    second = results.load(_run(tmp_path / "b", "B", {"x": b}))
    (found,) = compare.compare(first, second).slos
    assert found.change == change


def test_tests_that_stop_passing_are_regressions(tmp_path: Path) -> None:
    a = results.load(_run(tmp_path / "a", "A", BASE, {"t::one": "passed", "t::two": "failed",
                                                    "t::three": "passed", "t::four": "passed"}))
    b = results.load(_run(tmp_path / "b", "B", BASE, {"t::one": "failed", "t::two": "passed",
                                                    "t::three": "skipped", "t::new": "passed"}))
    found = compare.compare(a, b)
    assert {c.test: c.change for c in found.tests if c.change != "unchanged"} == {
        "t::one": "regressed", "t::two": "fixed", "t::three": "regressed",
        "t::four": "regressed", "t::new": "new"}
    assert len(found.regressions) == 3
    assert "noise:" in found.text()[-1]


def test_compare_command_exits_1_on_a_regression_and_prints_json(tmp_path: Path) -> None:
    _run(tmp_path, "A", BASE)
    _run(tmp_path, "B", {**BASE, "notready-detection": 12.0})
    _run(tmp_path, "C", BASE)
    same = subprocess.run([*CLI, "compare", "A", "C", "--reports", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert same.returncode == 0, same.stderr
    assert "0 regression(s) beyond noise" in same.stdout
    worse = subprocess.run([*CLI, "compare", "A", "B", "--reports", str(tmp_path), "-o", "json"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert worse.returncode == 1, worse.stderr
    data = json.loads(worse.stdout)
    assert data["regressions"] == ["SLO notready-detection of zone-outage: 8.20 PASS -> 12.00 FAIL"]
    assert data["noise"] == compare.NOISE_RULE


def test_results_command_prints_yaml(tmp_path: Path) -> None:
    _run(tmp_path, "A", BASE)
    done = subprocess.run([*CLI, "results", "--reports", str(tmp_path), "-o", "yaml"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout)["verdict"] == "PASS"
