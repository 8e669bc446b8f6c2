"""qualify: bad input refused before anything starts; what it passes to pytest; its summary lines."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from zoneproof import cluster, errors
from zoneproof.bench.chaos import samples_of
from zoneproof.cli import main as cli_main
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.components.harness import kinds
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.command import Command
from zoneproof.report import summary
from zoneproof.slo import SloResult, SloStatus
from zoneproof.suites import qualify

ROOT = qualify.repo_root()


def test_experiments_are_the_chaos_files() -> None:
    assert {"zone-outage", "zone-drain", "etcd-quorum-loss"} <= set(qualify.experiments(ROOT))


@pytest.mark.parametrize(("options", "message"), [
    (qualify.Options(only=("zone-outage", "nope")), "unknown experiment(s) nope: choose from"),
    (qualify.Options(skip=("typo",)), "unknown experiment(s) typo"),
    (qualify.Options(workers=0), "--workers must be >= 1"),
    (qualify.Options(scale=-1), "--scale takes a number of nodes per zone >= 1"),
    (qualify.Options(scale=10, only=("zone-outage",)), "--scale runs the scale profile alone"),
    (qualify.Options(scale=10, self_check=True), "--scale runs the scale profile alone"),
])
def test_bad_options_name_the_fix(options: qualify.Options, message: str, tmp_path: Path) -> None:
    backend = cluster.get_backend("local")
    with pytest.raises(errors.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        qualify.qualify(backend, ClusterSpec(name="never-made"), options, kubeconfig=None,
                        progress=print)
    assert backend.get("never-made") is None


def test_bad_slo_file_is_refused_first(tmp_path: Path) -> None:
    bad = tmp_path / "slo.yaml"
    bad.write_text("apiVersion: zoneproof.dev/v1\nkind: SloSet\nslos:\n  - name: x\n")
    with pytest.raises(errors.ConfigError, match="metric"):
        qualify.qualify(cluster.get_backend("local"), ClusterSpec(name="never-made"),
                        qualify.Options(slo_file=bad, reports=tmp_path), kubeconfig=None,
                        progress=print)
    assert not list(tmp_path.glob("2*")), "no report directory for a refused run"


def test_the_gate_runs_what_judges_the_components_not_zoneproofs_own_tests(
        tmp_path: Path) -> None:
    """Every kind's conformance suites (the kinds registry) and the chaos experiments; not
    tests/ (make test's); the self-check (broken twins) only with --self-check."""
    conformance = {d for kind in kinds.every() for d in kind.spec.conformance}
    assert conformance and set(qualify.SUITES) == {*conformance, "chaos"}
    assert not [s for s in qualify.SUITES if s.startswith("tests")]
    local, spec = cluster.get_backend("local"), ClusterSpec(name="zp")
    argv = qualify._pytest_argv(local, spec, tmp_path, qualify.Options(), kubeconfig=None)
    assert argv[3:3 + len(qualify.SUITES)] == list(qualify.SUITES)
    assert "not self_check" in argv[argv.index("-m", 3) + 1]
    checked = qualify._pytest_argv(local, spec, tmp_path, qualify.Options(self_check=True),
                                   kubeconfig=None)
    assert "self_check" not in checked[checked.index("-m", 3) + 1]


def test_the_self_check_is_a_cli_option_of_qualify_and_certify() -> None:
    parser = cli_main._parser()
    assert parser.parse_args(["qualify", "--self-check"]).self_check is True
    assert parser.parse_args(["qualify"]).self_check is False
    assert parser.parse_args(["certify", "p.yaml", "--key", "k", "--self-check"]).self_check


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 2), (3, 3), (8, 8), (64, 8)])
def test_the_gate_runs_a_worker_per_core_by_default(
        monkeypatch: pytest.MonkeyPatch, cores: int, workers: int) -> None:
    """More workers than cores starved the history traffic on a slower host (at most 8);
    both commands and ``Options`` take that default."""
    monkeypatch.setattr(qualify.os, "sched_getaffinity", lambda _pid: set(range(cores)))
    assert qualify.default_workers() == workers
    assert qualify.Options().workers == workers
    parser = cli_main._parser()
    assert parser.parse_args(["qualify"]).workers == workers
    assert parser.parse_args(["certify", "p.yaml", "--key", "k"]).workers == workers


def test_pytest_argv_carries_every_option(tmp_path: Path) -> None:
    vendor = Components(controller=Component(Kind.CONTROLLER, Command("c {kubeconfig} {identity}")))
    options = qualify.Options(slo_file=tmp_path / "s.yaml", only=("zone-outage", "zone-drain"),
                              skip=("webhook-down",), allow_destructive=True,
                              components=vendor, pytest_args=["-x"], thorough=True, seed=42)
    argv = qualify._pytest_argv(cluster.get_backend("local"), ClusterSpec(name="zp"), tmp_path,
                                options, kubeconfig=None)
    assert argv[-1] == "-x"
    for expected in ("--zp-backend=local", "--zp-cluster-name=zp", f"--zp-report-dir={tmp_path}",
                     f"--junitxml={tmp_path / 'junit.xml'}", "--zp-experiments=zone-outage,zone-drain",
                     "--zp-skip-experiments=webhook-down", "--zp-allow-destructive",
                     f"--zp-slo-file={tmp_path / 's.yaml'}", f"--zp-components={vendor.to_json()}",
                     "--zp-thorough", "--zp-seed=42"):
        assert expected in argv


def test_scale_profile_on_a_backend_without_nodes_at_scale_is_refused(tmp_path: Path) -> None:
    kind = cluster.get_backend("kind")
    with pytest.raises(errors.ConfigError, match="--scale needs a backend whose beds hold nodes "
                                                 "at scale"):
        qualify.qualify(kind, ClusterSpec(name="never-made"),
                        qualify.Options(scale=10, reports=tmp_path), kubeconfig=None,
                        progress=print)
    assert not list(tmp_path.glob("2*")), "no report directory for a refused run"


def test_scale_profile_runs_alone_in_one_process(tmp_path: Path) -> None:
    argv = qualify._pytest_argv(cluster.get_backend("local"), ClusterSpec(name="zp"), tmp_path,
                                qualify.Options(scale=10), kubeconfig=None)
    assert argv[3:7] == [qualify.SCALE_SUITE, "-n", "0", "--zp-scale=10"]
    assert not set(qualify.SUITES) & set(argv)
    assert not [a for a in argv if a.startswith("--zp-scale-pods")], "the profile's default"
    sized = qualify._pytest_argv(cluster.get_backend("local"), ClusterSpec(name="zp"), tmp_path,
                                 qualify.Options(scale=334, scale_pods=100_000), kubeconfig=None)
    assert sized[6:8] == ["--zp-scale=334", "--zp-scale-pods=100000"]


@pytest.mark.parametrize("options", [qualify.Options(scale_pods=1000),
                                     qualify.Options(scale=3, scale_pods=-1)])
def test_scale_pods_go_with_scale(options: qualify.Options, tmp_path: Path) -> None:
    local = cluster.get_backend("local")
    with pytest.raises(errors.ConfigError, match="--scale-pods takes a number of pods >= 1 and "
                                                 "goes with --scale NODES_PER_ZONE"):
        qualify.qualify(local, ClusterSpec(name="never-made"),
                        dataclasses.replace(options, reports=tmp_path), kubeconfig=None,
                        progress=print)


def _summary(*outcomes: summary.ItemResult) -> summary.Summary:
    return summary.build(list(outcomes), started="s", finished="f", duration_s=1.0,
                         versions={}, exit_status=1)


def _result(name: str, status: SloStatus, observed: float | None) -> SloResult:
    return SloResult(name, status, observed, 9.0, "seconds", "")


def test_describe_lists_slos_walls_and_failures() -> None:
    lines = qualify.describe(_summary(summary.ItemResult(
        "chaos/test_experiments.py::test_experiment[zone-outage]", "failed", 21.5,
        [_result("lease-failover", SloStatus.NO_DATA, None)])))
    assert "NO_DATA" in lines[1] and "zone-outage" in lines[1] and lines[1].split()[-3] == "-"
    assert lines[2] == "SLOs: 0 passed, not passed: 1 NO_DATA"
    assert lines[3].split() == ["suite", "tests", "busy", "s", "set-up", "s", "wall", "s",
                                "workers"]
    assert lines[4].split() == ["chaos", "1", "21.5", "0.0", "-", "-"]
    assert lines[6].split()[:3] == ["zone-outage", "failed", "21.5"]
    assert lines[7].startswith("self-check: not run")
    assert lines[8].startswith("FAILED chaos/")


def test_the_time_table_says_where_the_gates_time_went() -> None:
    """Per suite (tests, summed time, set-up share, span on the run's clock, workers) and per
    experiment (outcome, time, set-up, start, worker), in the order they started."""
    def timed(nodeid: str, duration: float, start: float, end: float, worker: str, *,
              setup: float = 0.0, self_check: bool = False) -> summary.ItemResult:
        return summary.ItemResult(nodeid, "passed", duration, setup_s=setup, start_s=start,
                                  end_s=end, worker=worker, self_check=self_check)
    run = _summary(
        timed("chaos/test_experiments.py::test_experiment[zone-outage]", 80.0, 10.0, 90.0,
              "gw1", setup=30.0),
        timed("conformance/ha_config/test_cases.py::test_case[a]", 4.0, 0.0, 4.0, "gw0"),
        timed("conformance/ha_config/test_cases.py::test_case[b]", 2.0, 4.0, 7.0, "gw0"),
        timed("chaos/test_experiments.py::test_experiment[zone-drain]", 40.0, 90.0, 130.0,
              "gw1"),
        timed("chaos/test_experiments.py::test_experiment_catches_a_broken_controller[x]",
              20.0, 130.0, 150.0, "gw0", self_check=True))
    suites = run.suite_times()
    assert [r["suite"] for r in suites] == ["conformance/ha_config", "chaos", "self-check"]
    assert suites[0] == {"suite": "conformance/ha_config", "tests": 2, "busy_s": 6.0,
                         "setup_s": 0.0, "start_s": 0.0, "end_s": 7.0, "wall_s": 7.0,
                         "workers": ["gw0"]}
    assert (suites[1]["busy_s"], suites[1]["setup_s"], suites[1]["wall_s"]) == (120.0, 30.0,
                                                                                120.0)
    assert [(r["experiment"], r["setup_s"], r["start_s"], r["worker"])
            for r in run.experiment_times()] == [("zone-outage", 30.0, 10.0, "gw1"),
                                                  ("zone-drain", 0.0, 90.0, "gw1")]
    table = qualify.time_table(run)
    assert table[1].split() == ["conformance/ha_config", "2", "6.0", "0.0", "7.0", "gw0"]
    assert table[2].split() == ["chaos", "2", "120.0", "30.0", "120.0", "gw1"]
    assert table[3].split() == ["self-check", "1", "20.0", "0.0", "20.0", "gw0"]
    assert table[5].split() == ["zone-outage", "passed", "80.0", "30.0", "10.0", "gw1"]
    assert table[6].split() == ["zone-drain", "passed", "40.0", "0.0", "90.0", "gw1"]
    assert qualify.time_table(_summary()) == [], "no tests, no table"


def test_the_terminal_says_whether_the_self_check_ran() -> None:
    twin = "chaos/test_experiments.py::test_experiment_catches_a_broken_controller[x]"
    experiment = summary.ItemResult("chaos/test_experiments.py::test_experiment[a]", "passed")
    without = qualify.describe(_summary(experiment))
    assert [line for line in without if line.startswith("self-check")] == [
        "self-check: not run (the broken twins that prove the experiments catch a broken "
        "component: --self-check adds them; make test runs them)"]
    ran = qualify.describe(_summary(experiment, summary.ItemResult(twin, "passed",
                                                                   self_check=True)))
    assert "self-check: ran (1 passed)" in ran


def test_a_void_result_is_shown_void_and_not_counted_as_passed() -> None:
    run = _summary(summary.ItemResult(
        "chaos/test_experiments.py::test_experiment[etcd-kill-leader]", "failed", 30.0,
        [_result("history-linearizable", SloStatus.VOID, None),
         _result("lost-acknowledged-writes", SloStatus.PASS, 0.0)]))
    assert not run.passed and run.slo_counts == {"PASS": 1, "VOID": 1}
    assert run.to_dict()["slo_counts"] == {"PASS": 1, "VOID": 1}
    lines = qualify.describe(run)
    assert "VOID" in lines[1] and "history-linearizable" in lines[1]
    assert "SLOs: 1 passed, not passed: 1 VOID" in lines
    assert any(line.startswith("VOID: 1 SLO result(s)") and "not passed" in line
               for line in lines)


def test_describe_names_the_components_that_ran() -> None:
    vendor = {"component": {"kind": "webhook", "source": "command", "command": "hook {port}"},
              "executable": "/usr/bin/hook", "sha256": "ab" * 32, "starts": 2}
    lines = qualify.describe(summary.build([], started="s", finished="f", duration_s=1.0,
                                           versions={"components": {
        "webhook": {"starts": 2, "ran": [vendor]},
        "controller": {"starts": 0, "ran": [], "note": "no controller was started in this run"}}},
                                           exit_status=0))
    assert lines[-2:] == [
        "webhook under test: command 'hook {port}', /usr/bin/hook sha256 abababababababab… (2 starts)",
        "controller under test: no controller was started in this run"]


def test_bench_chaos_samples_every_measured_slo_and_wall_time() -> None:
    test = "chaos/test_experiments.py::test_experiment[zone-outage]"
    samples = samples_of(_summary(
        summary.ItemResult(test, "passed", 20.5, [
            _result("lease-failover", SloStatus.PASS, 6.5),
            _result("concurrent-actors", SloStatus.NO_DATA, None)]),
        summary.ItemResult("conformance/x.py::test_y", "passed", 1.0)))
    assert samples == {"zone-outage lease-failover": [6.5], "zone-outage wall s": [20.5]}


def test_describe_says_which_experiments_ran_again_after_a_void_run() -> None:
    again = summary.ItemResult("chaos/test_experiments.py::test_experiment[etcd-kill-leader]",
                               "passed", 80.0, void_runs=1)
    once = summary.ItemResult("chaos/test_experiments.py::test_experiment[zone-drain]",
                              "passed", 40.0)
    lines = qualify.describe(_summary(again, once))
    assert [line for line in lines if line.startswith("RAN AGAIN")] == [
        f"RAN AGAIN {again.nodeid}: 1 run(s) of it judged nothing (VOID) first"]
