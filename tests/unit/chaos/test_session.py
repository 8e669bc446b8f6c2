"""Closing a run: every fault reverted and every extra stopped, even when one step fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from zoneproof.chaos import session
from zoneproof.chaos.settings import Settings
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.faults import Injector, StopKubelets
from zoneproof.measure import Timeline


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


def _run(cluster: FakeCluster, tmp_path: Path) -> session.Run:
    timeline = Timeline()
    fake = cast(Cluster, cluster)
    return session.Run(Settings(), fake, timeline, Injector(fake, timeline), tmp_path,
                       cast(Any, None), "zp-chaos-test")


def test_close_reverts_faults_and_stops_every_extra_despite_failures(tmp_path: Path) -> None:
    cluster, log = FakeCluster(), []
    run = _run(cluster, tmp_path)
    session._state.run = run
    assert run.start_fault(StopKubelets(("n1", "n2")), max_duration_s=60) == ("n1", "n2")
    assert cluster.stopped == {"n1", "n2"}
    run.extras.update({"first": Extra(log, "first"), "broken": Extra(log, "broken", fail=True),
                       "last": Extra(log, "last")})
    closed = session.close_run()
    assert closed is run and session._state.run is None
    assert cluster.stopped == set()
    assert log == ["last", "broken", "first"]  # reverse order of registration, none skipped
    assert run.problems == ["stop broken: RuntimeError: broken would not stop"]
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
    session._state.run = None
    assert session.close_run() is None
