"""The injector always reverts, refuses what a cluster must not take, and records both ends."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.cluster.interface import Capability, Component
from zoneproof.faults import Injector, KillComponent, KillEtcdMember, StopKubelets, ZoneOutage
from zoneproof.measure import Timeline


@dataclass
class RecordingCluster:
    """Stands in for a Cluster: records primitive calls (pure logic under test)."""

    capabilities: frozenset[Capability] = frozenset(Capability)
    name: str = "fake"
    backend: str = "fake"
    kubeconfig: Path = Path("/dev/null")
    calls: list[str] = field(default_factory=list)
    fail_on: str = ""
    reverted: threading.Event = field(default_factory=threading.Event)

    def _call(self, what: str) -> None:
        self.calls.append(what)
        if what == self.fail_on:
            raise errors.FaultError(f"{what} failed")

    def nodes_by_zone(self) -> dict[str, list[str]]:
        return {"zone-a": ["a1", "a2"], "zone-b": ["b1"]}

    def stop_kubelet(self, node: str) -> None:
        self._call(f"stop {node}")

    def start_kubelet(self, node: str) -> None:
        self._call(f"start {node}")
        self.reverted.set()

    def zone_down(self, zone: str) -> None:
        self._call(f"down {zone}")

    def zone_up(self, zone: str) -> None:
        self._call(f"up {zone}")

    def etcd_members(self) -> list[str]:
        return ["etcd-0", "etcd-1", "etcd-2"]

    def etcd_leader(self) -> str:
        return "etcd-1"

    def kill_etcd_member(self, member: str) -> None:
        self._call(f"kill {member}")

    def restart_etcd_member(self, member: str) -> None:
        self._call(f"restart {member}")

    def wait_etcd_healthy(self, timeout_s: float = 30.0) -> None:
        self._call("etcd healthy")

    def kill_component(self, component: Component) -> None:
        self._call(f"kill {component}")

    def restart_component(self, component: Component) -> None:
        self._call(f"restart {component}")


def _injector(cluster: RecordingCluster) -> Injector:
    return Injector(cluster, Timeline())  # type: ignore[arg-type]


def test_inject_then_revert_with_targets_and_record() -> None:
    cluster = RecordingCluster()
    injector = _injector(cluster)
    with injector.injected(ZoneOutage("zone-a"), max_duration_s=60) as targets:
        assert targets == ("a1", "a2")
        assert cluster.calls == ["down zone-a"]
    assert cluster.calls == ["down zone-a", "up zone-a"]
    record = injector.records[0]
    assert record.name == "zone-outage" and record.reverted_at is not None
    assert [e.kind for e in injector.timeline.events] == ["fault_injected", "fault_reverted"]


def test_leader_is_resolved_at_injection_and_restarted() -> None:
    cluster = RecordingCluster()
    with _injector(cluster).injected(KillEtcdMember("leader"), max_duration_s=60):
        pass
    assert cluster.calls == ["kill etcd-1", "restart etcd-1", "etcd healthy"]


def test_revert_runs_when_inject_fails_half_way() -> None:
    cluster = RecordingCluster(fail_on="stop a2")
    with pytest.raises(errors.FaultError), \
            _injector(cluster).injected(StopKubelets(("a1", "a2")), max_duration_s=60):
        pytest.fail("the block must not run when inject fails")
    assert cluster.calls == ["stop a1", "stop a2", "start a1", "start a2"]


def test_revert_runs_when_the_block_raises() -> None:
    cluster = RecordingCluster()
    with pytest.raises(KeyboardInterrupt), \
            _injector(cluster).injected(KillComponent(Component.SCHEDULER), max_duration_s=60):
        raise KeyboardInterrupt
    assert cluster.calls[-1] == "restart kube-scheduler"


def test_watchdog_reverts_an_overlong_fault_once() -> None:
    cluster = RecordingCluster()
    injector = _injector(cluster)
    with injector.injected(StopKubelets(("b1",)), max_duration_s=0.05):
        assert cluster.reverted.wait(5), "the watchdog did not revert"
    assert cluster.calls == ["stop b1", "start b1"]
    assert "fault_expired" in [e.kind for e in injector.timeline.events]


def test_refused_without_capability_before_touching_anything() -> None:
    cluster = RecordingCluster(capabilities=frozenset({Capability.STOP_KUBELET}))
    with pytest.raises(errors.FaultError, match=r"needs destructive.*allow-destructive"), \
            _injector(cluster).injected(ZoneOutage("zone-a"), max_duration_s=60):
        pass
    assert cluster.calls == []


def test_revert_all_undoes_active_faults() -> None:
    cluster = RecordingCluster()
    injector = _injector(cluster)
    with injector.injected(ZoneOutage("zone-b"), max_duration_s=60):
        injector.revert_all()
        assert cluster.calls == ["down zone-b", "up zone-b"]
    assert cluster.calls == ["down zone-b", "up zone-b"]  # not reverted twice


def test_the_faults_bound_reaches_the_facet_during_inject_only() -> None:
    """Facets that hand a fault to an agent outside this process give it the injector's bound."""
    from zoneproof.cluster.interface import fault_max_duration_s

    seen: list[float | None] = []

    class BoundCluster(RecordingCluster):
        def zone_down(self, zone: str) -> None:
            seen.append(fault_max_duration_s.get())

    injector = _injector(BoundCluster())
    with injector.injected(ZoneOutage("zone-a"), max_duration_s=42):
        assert fault_max_duration_s.get() is None
    assert seen == [42]
