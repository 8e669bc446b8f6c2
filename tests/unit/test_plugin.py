"""The pytest plugin's options, validated before any cluster is touched (pytester)."""

import json
import sys
from pathlib import Path
from xml.etree import ElementTree

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


@pytest.mark.parametrize(("args", "message"), [
    (("--zp-scale", "ten"), "--zp-scale takes a whole number of nodes per zone >= 1"),
    (("--zp-scale", "0"), "--zp-scale takes a whole number of nodes per zone >= 1"),
    (("--zp-scale", "10", "--zp-backend", "kind"),
     "--zp-scale needs a backend whose beds hold nodes at scale (local), not kind"),
    (("--zp-scale-pods", "1000"), "--zp-scale-pods sizes the scale profile: pass --zp-scale"),
    (("--zp-scale", "10", "--zp-scale-pods", "0"),
     "--zp-scale-pods takes a whole number of pods >= 1, got '0'"),
])
def test_scale_profile_option_is_validated(pytester: pytest.Pytester, args: tuple[str, ...],
                                           message: str) -> None:
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


@pytest.mark.parametrize(("args", "pods"), [((), 0), (("--zp-scale", "3"), 300),
                                            (("--zp-scale", "3", "--zp-scale-pods", "2000"), 2000)])
def test_scale_profile_pods(pytester: pytest.Pytester, args: tuple[str, ...], pods: int) -> None:
    pytester.makepyfile(f"""
        def test_pods(zp_settings):
            assert zp_settings.scale_pods == {pods}
    """)
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == 0, result.stdout.str()


def test_the_seed_of_generated_inputs_is_given_or_the_runs_and_shown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_seed(zp_seed, zp_settings):
            assert zp_seed == 42 and zp_settings.thorough
    """)
    result = pytester.runpytest_subprocess("--zp-seed", "42", "--zp-thorough")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["zoneproof: backend=local * seed=42 thorough"])
    drawn = pytester.runpytest_subprocess()
    drawn.stdout.fnmatch_lines(["zoneproof: backend=local * run=* seed=*"])
    refused = pytester.runpytest_subprocess("--zp-seed", "-1")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--zp-seed takes a whole number >= 0*"])


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


def test_a_module_that_cannot_be_collected_is_named_in_the_summary(
        pytester: pytest.Pytester) -> None:
    """A suite module that fails to import (e.g. a missing dependency) is an error the
    summary names, with its cause — not a run that reads as if the module were not there."""
    pytester.makepyfile(test_fine="def test_fine():\n    pass\n",
                        test_broken="import no_such_module_zp\n\ndef test_never():\n    pass\n")
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess("-n", "2", f"--zp-report-dir={reports}")
    assert result.ret != 0
    doc = json.loads((reports / "summary.json").read_text())
    assert doc["verdict"] == "FAIL"
    (failure,) = doc["failures"]
    assert failure["test"] == "test_broken.py" and "no_such_module_zp" in failure["message"]


def test_a_summary_is_written_without_xdist(pytester: pytest.Pytester) -> None:
    """The kind runs use -p no:xdist: the summary writer's xdist hook must not make
    pytest refuse the plugin (CI once failed here with 'unknown hook pytest_testnodedown')."""
    pytester.makepyfile(test_fine="def test_fine():\n    pass\n")
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess("-p", "no:xdist", f"--zp-report-dir={reports}")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert json.loads((reports / "summary.json").read_text())["verdict"] == "PASS"


def test_report_dir_gets_a_summary_from_every_worker(pytester: pytest.Pytester) -> None:
    """Outcomes, SLO properties and the components the harness started reach summary.json
    also through xdist workers."""
    pytester.makepyfile(test_slos='''
        import sys
        import pytest
        from zoneproof.components.harness import started
        from zoneproof.components.harness.component import Component
        from zoneproof.components.harness.sources.command import Command
        from zoneproof.components.harness.registry import Kind
        from zoneproof.report.junit import slo_property
        from zoneproof.slo import SloResult, SloStatus

        def test_held(record_property, tmp_path):
            record_property(*slo_property(SloResult(
                "lease-failover", SloStatus.PASS, 4.0, 9.0, "seconds", "")))
            vendor = Component(Kind.CONTROLLER, Command("{python} my.py {kubeconfig} {identity}"))
            for identity in ("a", "b"):
                log = tmp_path / f"{identity}.log"
                log.write_text(f"replica {identity} ran")
                started.note(started.of_command(vendor, [sys.executable, "my.py", "k", identity],
                                                log=log))

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
    logs = reports / "components" / "test_slos.py_test_held"
    assert sorted(p.name for p in logs.iterdir()) == ["a.log", "b.log"], "logs outlive tmp dirs"
    assert (logs / "b.log").read_text() == "replica b ran"


@pytest.mark.parametrize(("args", "message"), [
    (["--zp-slo-file", "missing.yaml"], "--zp-slo-file"),
    (["--zp-experiments", "no-such-experiment", "chaos"], "unknown chaos experiment"),
    (["--zp-experiments", "zone-outage nope-a,nope-b", "chaos"],
     "unknown chaos experiment(s) nope-a, nope-b: choose from zone-outage"),
    (["--zp-skip-experiments", "zone-outage, nope-c", "chaos"],
     "unknown chaos experiment(s) nope-c: choose from zone-outage"),
    (["--zp-webhook-registration", "missing.yaml"], "missing.yaml is not a file"),
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


def test_on_a_backend_that_makes_no_clusters_nothing_stands_in(pytester: pytest.Pytester) -> None:
    """Destructive tests and private beds skip with the reason; no other cluster is made."""
    kubeconfig = pytester.path / "users.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    pytester.makepyfile('''
        import pytest

        @pytest.mark.destructive
        def test_breaks_things():
            raise AssertionError("must not run")

        def test_wants_a_bed(private_bed):
            raise AssertionError("must not run")
    ''')
    result = pytester.runpytest_subprocess("--zp-backend", "existing", "--zp-kubeconfig",
                                           str(kubeconfig), "-rs")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*2 skipped*"])
    assert result.stdout.str().count("never substitutes another cluster") == 2


def test_a_session_is_a_run_that_sigterm_ends_cleanly(pytester: pytest.Pytester,
                                                      tmp_path: Path) -> None:
    """SIGTERM takes Ctrl-C's path: teardown runs, the run's directory goes."""
    flag, torn = tmp_path / "started", tmp_path / "torn-down"
    pytester.makepyfile(f'''
        import os, signal, time, pytest
        from pathlib import Path
        from zoneproof import runs

        @pytest.fixture
        def held():
            yield
            Path({str(torn)!r}).write_text("yes")

        def test_hold(held):
            Path({str(flag)!r}).write_text(runs.current().id)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
    ''')
    result = pytester.runpytest_subprocess("-p", "no:xdist")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert torn.read_text() == "yes"
    from zoneproof import runs

    assert not runs.directory(flag.read_text()).exists()


@pytest.mark.usefixtures("vendor_programs")  # ctl on PATH
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


def test_loadgroup_keeps_each_xdist_group_on_one_worker(pytester: pytest.Pytester) -> None:
    """Under pytest 9, pytest-xdist's own loadgroup spreads a group over the workers (its
    ``@group`` nodeid suffix is lost); with the plugin each group runs on one worker."""
    pytester.makepyfile(test_grouped="""
        import os, time, pytest
        pytestmark = pytest.mark.xdist_group("bed")

        @pytest.mark.parametrize("i", range(6))
        def test_grouped(i, record_property):
            time.sleep(0.2)
            record_property("worker", os.environ["PYTEST_XDIST_WORKER"])
    """, test_loose="""
        import time
        def test_a(): time.sleep(0.5)
        def test_b(): time.sleep(0.5)
    """)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", f"--junitxml={junit}")
    assert result.ret == 0, result.stdout.str()
    text = junit.read_text()
    workers = {w for w in ("gw0", "gw1") if f'value="{w}"' in text}
    assert text.count('name="worker"') == 6 and len(workers) == 1, text


def test_on_a_users_cluster_every_destructive_test_runs_on_one_worker(
        pytester: pytest.Pytester) -> None:
    """With --zp-allow-destructive on a backend that makes no clusters, the user's cluster is
    every bed: destructive tests of any xdist group (or none) share one worker, one after the
    other (chaos's two groups and ungrouped faults alike), and so do the tests of the run's
    webhook registration, then module-scoped (an experiment registers the webhook again and
    must see its own registration mutate its probe); the others still spread."""
    kubeconfig = pytester.path / "users.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    record = """
        import os, time, pytest

        def _ran(record_property):
            time.sleep(0.3)
            record_property("worker", os.environ["PYTEST_XDIST_WORKER"])
    """
    pytester.makepyfile(test_chaos=record + """
        pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("chaos")]

        @pytest.mark.parametrize("i", range(3))
        def test_experiment(i, record_property): _ran(record_property)

        @pytest.mark.xdist_group("chaos-twins")
        @pytest.mark.parametrize("i", range(3))
        def test_twin(i, record_property): _ran(record_property)
    """, test_ungrouped=record + """
        @pytest.mark.destructive
        @pytest.mark.parametrize("i", range(3))
        def test_fault(i, record_property): _ran(record_property)

        @pytest.mark.parametrize("i", range(4))
        def test_harmless(i, record_property): _ran(record_property)
    """, test_registered=record + """
        from zoneproof_fixtures import settings

        @pytest.fixture
        def webhook_under_test(): return {}  # stands in for the plugin's (no cluster here)

        @pytest.mark.parametrize("i", range(3))
        def test_case(i, webhook_under_test, record_property): _ran(record_property)

        def test_registration_scope(request, record_property):
            assert settings.registration_scope("webhook_under_test", request.config) == "module"
            _ran(record_property)
    """)

    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "loadgroup", "--zp-backend", "existing", "--zp-kubeconfig",
        str(kubeconfig), "--zp-allow-destructive", f"--junitxml={junit}")
    assert result.ret == 0, result.stdout.str()
    ran: dict[str, set[str]] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        worker = case.find("properties/property[@name='worker']")
        assert worker is not None, ElementTree.tostring(case)
        ran.setdefault(case.get("name", "").split("[")[0], set()).add(worker.get("value", ""))
    destructive = set().union(*(ran[t] for t in ("test_experiment", "test_twin", "test_fault",
                                                  "test_case")))
    assert len(destructive) == 1, ran
    assert ran["test_harmless"] - destructive, ran  # the other worker took those


def test_the_webhook_registration_is_run_wide_unless_the_users_cluster_is_every_bed(
        pytester: pytest.Pytester) -> None:
    """Without --zp-allow-destructive a user's cluster is not every bed: the run registers the
    webhook under test once for all its tests (the experiments run on beds of their own)."""
    kubeconfig = pytester.path / "users.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    pytester.makepyfile(test_scope="""
        from zoneproof_fixtures import settings

        def test_registration_scope(request):
            assert settings.registration_scope("webhook_under_test", request.config) == "session"
    """)
    result = pytester.runpytest_subprocess("--zp-backend", "existing", "--zp-kubeconfig",
                                           str(kubeconfig))
    assert result.ret == 0, result.stdout.str()


def test_the_self_check_is_recorded_and_leaving_it_out_is_no_gap(
        pytester: pytest.Pytester) -> None:
    """A test marked ``self_check`` is recorded as the self-check's, with its timing (worker,
    start, end on the run's clock); a run that leaves it out (the gate without --self-check)
    still PASSes, says it did not run and lists no gap."""
    pytester.makepyfile(test_gate='''
        import pytest

        def test_judges():
            pass

        @pytest.mark.self_check
        def test_twin_is_caught():
            pass
    ''')
    reports = pytester.path / "with"
    result = pytester.runpytest_subprocess("-n", "2", f"--zp-report-dir={reports}")
    result.assert_outcomes(passed=2)
    doc = json.loads((reports / "summary.json").read_text())
    assert doc["self_check"] == {"ran": True, "counts": {"passed": 1}, "failed": []}
    rows = {row["test"]: row for row in doc["tests"]}
    twin = rows["test_gate.py::test_twin_is_caught"]
    assert twin["self_check"] and twin["suite"] == "self-check"
    assert twin["worker"].startswith("gw") and 0 <= twin["start_s"] <= twin["end_s"]
    assert {r["suite"] for r in doc["timing"]["suites"]} == {"test_gate.py", "self-check"}
    reports = pytester.path / "without"
    result = pytester.runpytest_subprocess("-n", "2", "-m", "not self_check",
                                           f"--zp-report-dir={reports}")
    result.assert_outcomes(passed=1)
    doc = json.loads((reports / "summary.json").read_text())
    assert doc["verdict"] == "PASS" and doc["not_judged"] == []
    assert doc["self_check"] == {"ran": False, "counts": {}, "failed": []}


def test_loadgroup_hands_out_a_group_before_lone_tests_of_its_size(pytester: pytest.Pytester
                                                                   ) -> None:
    """A group of one test (a bed of its own, long) goes out before lone tests collected ahead
    of it; lone tests go in collection order."""
    pytester.makepyfile(test_a_lone="""
        def test_first(): pass
        def test_second(): pass
    """, test_b_grouped="""
        import pytest

        @pytest.mark.xdist_group("own-bed")
        def test_grouped(): pass
    """)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("-n", "1", "--dist", "loadgroup", f"--junitxml={junit}")
    assert result.ret == 0, result.stdout.str()
    ran = [case.get("name") for case in ElementTree.parse(junit).getroot().iter("testcase")]
    assert ran == ["test_grouped", "test_first", "test_second"], ran


def test_loadgroup_sends_the_longest_first_and_a_worker_starting_a_long_test_the_shortest(
        pytester: pytest.Pytester) -> None:
    """Units go out by their tests' ``expected_seconds`` (1 s unmarked), not by test count;
    a worker holds its next test before it runs one, so while its next test is long it is
    sent the shortest unit left, never the next long one."""
    pytester.makepyfile(test_order="""
        import pytest

        @pytest.mark.xdist_group("three")
        @pytest.mark.parametrize("i", range(3))
        def test_three(i): pass

        def test_short_1(): pass

        @pytest.mark.expected_seconds(20)
        def test_mid(): pass

        def test_short_2(): pass

        @pytest.mark.expected_seconds(50)
        def test_long(): pass
    """)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("-n", "1", "--dist", "loadgroup", f"--junitxml={junit}")
    assert result.ret == 0, result.stdout.str()
    ran = [case.get("name") for case in ElementTree.parse(junit).getroot().iter("testcase")]
    assert ran == ["test_long", "test_short_2", "test_mid", "test_short_1", "test_three[0]",
                   "test_three[1]", "test_three[2]"], ran


def test_chaos_experiments_spread_over_the_workers_but_the_zoned_bed_ones(
        pytester: pytest.Pytester) -> None:
    """chaos/conftest.py puts the experiments that run on zoned beds in its ``ZONED_BEDS``
    xdist groups, in turn by name (each group's zoned bed serves its share), and leaves the
    others in none: each runs on its worker's bed, so several run at once."""
    root = Path(__file__).parents[2] / "chaos"
    chaos = pytester.path / "chaos"
    chaos.mkdir()
    for name in ("conftest.py", "two-zones-down.yaml", "zone-outage-full.yaml",
                 "zone-outage.yaml", "etcd-kill-leader.yaml"):
        (chaos / name).write_text((root / name).read_text())
    (chaos / "test_experiments.py").write_text(
        "import pytest\nfrom pathlib import Path\n\n"
        "@pytest.fixture(autouse=True)\n"
        "def restore_bed():  # overrides the conftest's: no bed here\n    yield\n\n"
        "@pytest.mark.parametrize('path', sorted(Path(__file__).parent.glob('*.yaml')),\n"
        "                         ids=lambda p: p.stem)\n"
        "def test_experiment(path, request, record_property):\n"
        "    marks = [m.args[0] for m in request.node.iter_markers('xdist_group')]\n"
        "    record_property('groups', ','.join(marks))\n")
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("chaos", "-p", "no:xdist", "--zp-backend", "local",
                                           f"--junitxml={junit}")
    assert result.ret == 0, result.stdout.str()
    groups = {case.get("name"): case.find("properties/property[@name='groups']").get("value")
              for case in ElementTree.parse(junit).getroot().iter("testcase")}
    assert groups == {"test_experiment[etcd-kill-leader]": "",
                      "test_experiment[two-zones-down]": "chaos-zones-1",
                      "test_experiment[zone-outage-full]": "chaos-zones-2",
                      "test_experiment[zone-outage]": ""}, groups
