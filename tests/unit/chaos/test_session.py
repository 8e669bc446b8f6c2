"""Closing a run: every fault reverted and every extra stopped, even when one step fails."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any, cast

import pytest

from zoneproof import errors, runs
from zoneproof._util import reaping
from zoneproof.chaos import experiment, guard, session
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.faults import StopKubelets


class FakeCluster:
    name, backend, kubeconfig = "fake", "local", Path("/nonexistent")
    capabilities = frozenset(Capability)

    def __init__(self) -> None:
        self.stopped: set[str] = set()

    def stop_kubelet(self, node: str) -> None:
        self.stopped.add(node)

    def start_kubelet(self, node: str) -> None:
        self.stopped.discard(node)


class Extra:
    def __init__(self, log: list[str], name: str, fail: bool = False) -> None:
        self.log, self.name, self.fail = log, name, fail

    def stop(self) -> None:
        self.log.append(self.name)
        if self.fail:
            raise RuntimeError(f"{self.name} would not stop")


def _run(cluster: FakeCluster, tmp_path: Path) -> experiment.ExperimentRun:
    return experiment.ExperimentRun(ExperimentConfig(), cast(Cluster, cluster), cast(Any, None), tmp_path,
                                 guard.FaultPlan({}))


def test_close_reverts_faults_and_stops_every_extra_despite_failures(tmp_path: Path) -> None:
    cluster, log = FakeCluster(), []
    run = _run(cluster, tmp_path)
    session._open.run = run
    assert run.start_fault(StopKubelets(("n1", "n2")), max_duration_s=60) == ("n1", "n2")
    assert cluster.stopped == {"n1", "n2"}
    run.writer.start(cast(Any, Extra(log, "first")))
    run.admissions.start(cast(Any, Extra(log, "broken", fail=True)))
    run.webhook.start(cast(Any, Extra(log, "last")))
    closed = session.close_run()
    assert closed is run and session._open.run is None
    assert cluster.stopped == set()
    assert log == ["last", "broken", "first"]  # reverse order of registration, none skipped
    assert run.problems == ["stop admission traffic: RuntimeError: broken would not stop"]
    assert [(r.kind, r.reverted_at is not None) for r in run.injector.records] == [
        ("stop-kubelets", True)]


def test_stop_faults_by_kind(tmp_path: Path) -> None:
    cluster = FakeCluster()
    run = _run(cluster, tmp_path)
    run.start_fault(StopKubelets(("n1",)), max_duration_s=60)
    assert run.stop_faults("zone-outage") == []
    assert [r.targets for r in run.stop_faults("stop-kubelets")] == [("n1",)]
    assert run.stop_faults() == []


def test_close_without_a_run_is_a_no_op() -> None:
    session._open.run = None
    assert session.close_run() is None


def test_activities_without_the_control_name_the_fix() -> None:
    session._open.run = None
    with pytest.raises(errors.ConfigError, match="declare the zoneproof control"):
        session.current()


def test_a_planned_fault_is_the_one_injected_and_others_are_built() -> None:
    arguments = {"fault": "stop-kubelets", "parameters": {"nodes": ["n1"]}}
    plan = guard.FaultPlan.of({"method": [{"name": "a", "provider": {
        "type": "python", "module": guard.ACTIONS_MODULE, "func": "inject_fault",
        "arguments": arguments}}]})
    assert plan.fault("stop-kubelets", {"nodes": ["n1"]}) is plan.faults["a"]
    assert plan.fault("stop-kubelets", {"nodes": ["n2"]}) == StopKubelets(("n2",))


def test_a_refused_experiment_leaves_no_zoneproof_run(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The run opened for a chaos run is closed again when its cluster cannot be found."""
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.setattr(runs._current, "run", None)  # as `chaos run`: outside pytest's run
    monkeypatch.setattr(runs._current, "owned", False)
    monkeypatch.delenv(reaping.RUN_ENV, raising=False)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        with pytest.raises(errors.BackendError, match="no running local cluster 'nosuchbed'"):
            session.open_run({"title": "t"}, {"zoneproof_cluster": "nosuchbed"}, lambda _: None)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert runs.current() is None and runs.runs() == [] and session._open.run is None
