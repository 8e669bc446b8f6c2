"""qualify: bad input refused before anything starts; what it passes to pytest; its summary lines."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from zoneproof import cluster, errors
from zoneproof.bench.chaos import samples_of
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.components.harness.component import Command, Component, Components
from zoneproof.components.harness.registry import Kind
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
    assert lines[3] == "experiment zone-outage: failed in 21.5 s"
    assert lines[4].startswith("FAILED chaos/")


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
    assert lines == [
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
