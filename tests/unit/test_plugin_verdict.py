"""The run's verdict in summary.json is PASS only if everything that should have run ran and
passed: skipped or unselected tests make it PARTIAL, a signal makes it INTERRUPTED and the
test it cut is never passed (pytester: real pytest sessions, xdist workers included)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from zoneproof.slo.verdict import NOT_APPLICABLE

_TESTS = f'''
import pytest

def test_fine():
    pass

def test_skipped_for_want_of_consent():
    pytest.skip("destructive: pass --zp-allow-destructive")

def test_cannot_apply():
    pytest.skip("{NOT_APPLICABLE}the scale profile runs only when asked")

def test_left_out_by_k():
    pass
'''


def _summary(reports: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((reports / "summary.json").read_text())
    return doc


def test_skipped_and_unselected_tests_make_the_run_partial(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_some=_TESTS)
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess("-n", "2", f"--zp-report-dir={reports}",
                                           "-k", "not left_out")
    assert result.ret == 0, "pytest's own exit: nothing failed"
    doc = _summary(reports)
    assert doc["verdict"] == "PARTIAL"
    assert doc["not_judged"] == [
        {"test": "test_some.py::test_skipped_for_want_of_consent",
         "reason": "destructive: pass --zp-allow-destructive", "asked": False},
        {"test": "test_some.py::test_left_out_by_k",
         "reason": "not selected (--zp-experiments, --zp-skip-experiments, -k or -m)",
         "asked": True}]
    result.stdout.fnmatch_lines(["*zoneproof: summary PARTIAL*"])


def test_a_plugins_deselection_says_why(pytester: pytest.Pytester) -> None:
    """An item a plugin leaves out with its reason (chaos/conftest.py: the opt-in experiments)
    is not judged for that reason, not for options the user never gave."""
    pytester.makeconftest('''
        from zoneproof_fixtures import reporting

        def pytest_collection_modifyitems(config, items):
            left_out = [i for i in items if i.name == "test_opt_in"]
            for item in left_out:
                item.stash[reporting.DESELECTED_WHY] = "opt-in: runs only when named"
            config.hook.pytest_deselected(items=left_out)
            items[:] = [i for i in items if i not in left_out]
    ''')
    pytester.makepyfile(test_some="def test_fine():\n    pass\n\ndef test_opt_in():\n    pass\n")
    reports = pytester.path / "reports"
    for xdist in ((), ("-n", "2")):
        pytester.runpytest_subprocess(*xdist, f"--zp-report-dir={reports}")
        assert _summary(reports)["not_judged"] == [
            {"test": "test_some.py::test_opt_in", "reason": "opt-in: runs only when named",
             "asked": True}], xdist


def test_skips_that_cannot_apply_leave_a_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_some=_TESTS.split("def test_skipped_for", maxsplit=1)[0]
                        + "def test_cannot" + _TESTS.split("def test_cannot")[1])
    reports = pytester.path / "reports"
    pytester.runpytest_subprocess(f"--zp-report-dir={reports}")
    doc = _summary(reports)
    assert doc["verdict"] == "PASS" and doc["not_judged"] == []
    assert doc["counts"] == {"passed": 2, "skipped": 1}


def test_existing_backend_without_consent_is_partial(pytester: pytest.Pytester) -> None:
    """On a user's cluster without --zp-allow-destructive the destructive tests skip: the
    run judged less than it should, and says so."""
    kubeconfig = pytester.path / "users.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    pytester.makepyfile('''
        import pytest

        def test_harmless():
            pass

        @pytest.mark.destructive
        def test_breaks_things():
            raise AssertionError("must not run")
    ''')
    reports = pytester.path / "reports"
    pytester.runpytest_subprocess("--zp-backend", "existing", "--zp-kubeconfig",
                                  str(kubeconfig), f"--zp-report-dir={reports}")
    doc = _summary(reports)
    assert doc["verdict"] == "PARTIAL"
    (gap,) = doc["not_judged"]
    assert gap["test"].endswith("test_breaks_things") and not gap["asked"]
    assert "--allow-destructive" in gap["reason"], "the report names the fix"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_mid_test_makes_the_run_interrupted(pytester: pytest.Pytester,
                                                     sig: signal.Signals) -> None:
    """The signal reaches the whole process group (pytest and its xdist workers) while a
    test runs: that test is ``interrupted``, the verdict INTERRUPTED, no traceback."""
    started = pytester.path / "started"
    pytester.makepyfile(test_slow=f'''
        import time
        from pathlib import Path

        def test_quick():
            pass

        def test_cut_short():
            Path({str(started)!r}).touch()
            time.sleep(120)
    ''')
    reports = pytester.path / "reports"
    out = pytester.path / "out.log"
    with out.open("wb") as sink:
        run = subprocess.Popen([sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider",
                                f"--zp-report-dir={reports}"], cwd=pytester.path, stdout=sink,
                               stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 300  # a loaded machine starts pytest slowly
            while not started.exists():
                assert run.poll() is None and time.monotonic() < deadline, out.read_text()
                time.sleep(0.1)  # polling a file the test writes: no other signal to wait on
            os.killpg(run.pid, sig)
            code = run.wait(timeout=300)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
    text = out.read_text()
    assert code == pytest.ExitCode.INTERRUPTED, text
    doc = _summary(reports)
    assert doc["verdict"] == "INTERRUPTED", text
    outcomes = {t["test"]: t["outcome"] for t in doc["tests"]}
    assert outcomes["test_slow.py::test_cut_short"] == "interrupted", outcomes
    assert "Traceback" not in text, text


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["no-xdist", "xdist"])
def test_an_interrupted_run_names_every_selected_test_that_did_not_report(
        pytester: pytest.Pytester, workers: list[str]) -> None:
    """A Ctrl-C in the first test: the tests never reached are listed as interrupted, not
    left out (a signal that ended a worker before its test reported was a missing test)."""
    pytester.makepyfile(test_cut='''
        def test_first():
            raise KeyboardInterrupt

        def test_never_reached():
            pass
    ''')
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess(*workers, "-p", "no:randomly",
                                           f"--zp-report-dir={reports}")
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    doc = _summary(reports)
    outcomes = {t["test"]: t["outcome"] for t in doc["tests"]}
    assert doc["verdict"] == "INTERRUPTED"
    assert outcomes.get("test_cut.py::test_never_reached") == "interrupted", outcomes
    # xdist reports the test whose worker the interrupt ended as that worker's crash
    assert outcomes.get("test_cut.py::test_first") in ("interrupted", "error"), outcomes
