"""The pytest plugin's options, validated before any cluster is touched (pytester)."""

import json
import sys
from pathlib import Path

import pytest

from zoneproof import binaries


def test_unknown_backend_is_a_usage_error_listing_valid_ones(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--zp-backend", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--zp-backend: unknown backend 'nope': choose one of local, existing, kind*"])


def test_existing_backend_needs_a_kubeconfig(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--zp-backend", "existing")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs --zp-kubeconfig*"])


def test_invalid_zone_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--zp-zones", "Bad Zone!")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*not a valid label value*"])


@pytest.mark.parametrize(("value", "message"), [
    ("two", "*--zp-etcd-members takes 1, 3 or 5, got 'two'*"),
    ("2", "*etcd_members must be 1, 3 or 5*"),
])
def test_etcd_members_are_validated(pytester: pytest.Pytester, value: str, message: str) -> None:
    result = pytester.runpytest_subprocess("--zp-etcd-members", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_etcd_members_shape_the_runs_clusters(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_shape(zp_settings):
            assert zp_settings.spec.etcd_members == 3
    """)
    result = pytester.runpytest_subprocess("--zp-backend", "kind", "--zp-etcd-members", "3")
    assert result.ret == 0, result.stdout.str()


def test_ini_twin_and_header(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nzp_cluster_name = from-ini\n")
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess()
    result.stdout.fnmatch_lines(["zoneproof: backend=local cluster=from-ini*",
                                 "zoneproof pins: kubernetes v1.*"])
    assert result.ret == 0


def test_unit_tests_start_no_cluster(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess("--zp-cluster-name", "never-made")
    assert result.ret == 0
    assert "never-made" not in result.stdout.str().replace("cluster=never-made", "")


def test_report_dir_gets_a_summary_from_every_worker(pytester: pytest.Pytester) -> None:
    """Outcomes, SLO properties and the components the harness started reach summary.json
    also through xdist workers."""
    pytester.makepyfile(test_slos='''
        import sys
        import pytest
        from zoneproof.components.harness import started
        from zoneproof.components.harness.component import Command, Component
        from zoneproof.components.harness.registry import Kind
        from zoneproof.report.junit import slo_property
        from zoneproof.slo import SloResult, SloStatus

        def test_held(record_property):
            record_property(*slo_property(SloResult(
                "lease-failover", SloStatus.PASS, 4.0, 9.0, "seconds", "")))
            vendor = Component(Kind.CONTROLLER, Command("{python} my.py {kubeconfig} {identity}"))
            for identity in ("a", "b"):
                started.note(started.of_command(vendor, [sys.executable, "my.py", "k", identity]))

        def test_breached(record_property):
            record_property(*slo_property(SloResult(
                "etcd-write-error-window", SloStatus.FAIL, 7.5, 5.0, "seconds", "")))

        @pytest.mark.skip(reason="not here")
        def test_skipped():
            pass
    ''')
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess("-n", "2", f"--zp-report-dir={reports}")
    result.assert_outcomes(passed=2, skipped=1)
    doc = json.loads((reports / "summary.json").read_text())
    assert doc["verdict"] == "FAIL", "a breached SLO fails the run even if every test passed"
    assert {(r["name"], r["pass"]) for r in doc["slos"]} == {
        ("lease-failover", True), ("etcd-write-error-window", False)}
    assert doc["counts"] == {"passed": 2, "skipped": 1}
    assert doc["versions"]["python"]["chaostoolkit-lib"].startswith("1.44")
    ran = doc["versions"]["components"]
    (controller,) = ran["controller"]["ran"]
    assert controller["component"] == {"kind": "controller", "source": "command",
                                       "command": "{python} my.py {kubeconfig} {identity}"}
    assert controller["starts"] == 2 and controller["tests"] == ["test_slos.py::test_held"]
    assert controller["executable"] == str(Path(sys.executable).resolve())
    assert controller["sha256"] == binaries.sha256_of(Path(sys.executable).resolve())
    assert ran["webhook"] == {"starts": 0, "ran": [], "note": "no webhook was started in this run"}
    assert doc["versions"]["binaries"]["kind"]["version"] == binaries.PINS.kind


@pytest.mark.parametrize(("args", "message"), [
    (["--zp-slo-file", "missing.yaml"], "--zp-slo-file"),
    (["--zp-experiments", "no-such-experiment", "chaos"], "unknown chaos experiment"),
])
def test_report_options_are_validated(pytester: pytest.Pytester, args: list[str],
                                      message: str) -> None:
    chaos = pytester.path / "chaos"
    chaos.mkdir()
    (chaos / "zone-outage.yaml").write_text("title: x\n")
    (chaos / "conftest.py").write_text(
        (Path(__file__).parents[2] / "chaos" / "conftest.py").read_text())
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_broken_twins_run_only_where_the_controller_has_the_variant(pytester: pytest.Pytester
                                                                     ) -> None:
    """chaos/conftest.py skips a twin at collection (no bed made) when the controller under
    test cannot be started as its broken variant, and says why."""
    chaos = pytester.path / "chaos"
    chaos.mkdir()
    (chaos / "conftest.py").write_text(
        (Path(__file__).parents[2] / "chaos" / "conftest.py").read_text())
    (chaos / "test_twins.py").write_text(
        "import pytest\n\n"
        "@pytest.fixture(autouse=True)\n"
        "def restore_bed():  # overrides the conftest's: no bed here\n    yield\n\n"
        "@pytest.mark.parametrize('case', [('zone-outage', 'graceful-delete', 'slo')])\n"
        "def test_twin(case):\n    pass\n")
    pytester.runpytest_subprocess("chaos").assert_outcomes(passed=1)
    vendor = pytester.runpytest_subprocess(
        "chaos", "-rs", "--zp-controller-command", "ctl {kubeconfig} {identity}")
    vendor.assert_outcomes(skipped=1)
    vendor.stdout.fnmatch_lines(["*no broken twin to prove zone-outage can fail: the controller "
                                 "command 'ctl {kubeconfig} {identity}' has no variants*"])
