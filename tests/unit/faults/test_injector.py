"""The injector always reverts, refuses what a cluster must not take, and records both ends."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.cluster.interface import Capability, ControlPlaneProcess
from zoneproof.faults import (
    CordonZone,
    DrainZone,
    Effect,
    FaultContext,
    Injector,
    KillComponent,
    KillEtcdLeader,
    KillEtcdMembers,
    StopKubelets,
    ZoneOutage,
)
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

    def kill_component(self, component: ControlPlaneProcess) -> None:
        self._call(f"kill {component}")

    def restart_component(self, component: ControlPlaneProcess) -> None:
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
    assert record.kind == "zone-outage" and record.reverted_at is not None
    assert record.effects == (Effect.KUBELETS_STOPPED, Effect.NODES_NOT_READY)
    assert record.targets == ("a1", "a2")
    assert [e.kind for e in injector.timeline.events] == ["fault_injected", "fault_reverted"]


def test_a_fault_is_in_force_when_its_injection_returns() -> None:
    """A facet that confirms the fault later (a node agent acting on its poll) moves
    ``in_force_at``, not ``injected_at``; the revert keeps it."""
    clock = iter([0.0, 1.0, 3.5, 9.0, 9.0])
    injector = Injector(RecordingCluster(), Timeline(clock=lambda: next(clock)))  # type: ignore[arg-type]
    with injector.injected(StopKubelets(("a1",)), max_duration_s=60):
        live = injector.records[0]
        assert (live.injected_at, live.in_force_at, live.in_force) == (1.0, 3.5, 3.5)
    done = injector.records[0]
    assert (done.in_force_at, done.reverted_at) == (3.5, 9.0)
    assert type(done).from_dict(done.to_dict()) == done


def test_records_show_active_faults_and_revert_by_kind() -> None:
    cluster = RecordingCluster()
    injector = _injector(cluster)
    kubelets = injector.start(StopKubelets(("b1",)), max_duration_s=60)
    injector.start(ZoneOutage("zone-a"), max_duration_s=60)
    assert [(r.kind, r.reverted_at) for r in injector.records] == [
        ("stop-kubelets", None), ("zone-outage", None)]
    assert [r.kind for r in injector.revert_all("zone-outage")] == ["zone-outage"]
    assert injector.record(kubelets).reverted_at is None
    assert injector.records[1].reverted_at is not None
    injector.revert_all()
    assert injector.record(kubelets).reverted_at is not None
    assert cluster.calls == ["stop b1", "down zone-a", "up zone-a", "start b1"]


def test_leader_is_resolved_at_injection_and_restarted() -> None:
    cluster = RecordingCluster()
    with _injector(cluster).injected(KillEtcdLeader(), max_duration_s=60):
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
            _injector(cluster).injected(KillComponent(ControlPlaneProcess.SCHEDULER), max_duration_s=60):
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


def test_quorum_loss_needs_a_majority_and_kills_followers_first() -> None:
    cluster = RecordingCluster()
    with _injector(cluster).injected(KillEtcdMembers(2), max_duration_s=60) as targets:
        assert targets == ("etcd-0", "etcd-2")
    with pytest.raises(errors.FaultError, match="keeps quorum"):
        _injector(cluster).check(KillEtcdMembers(1))


@dataclass
class RecordingScheduling:
    calls: list[str] = field(default_factory=list)

    def cordon(self, label_selector: str) -> list[str]:
        self.calls.append(f"cordon {label_selector}")
        return []

    def uncordon(self, label_selector: str) -> list[str]:
        self.calls.append(f"uncordon {label_selector}")
        return []

    def drain(self, label_selector: str, *, timeout_s: float) -> list[str]:
        self.calls.append(f"drain {label_selector} {timeout_s:g}")
        return []


def test_cordon_and_drain_go_through_the_injector() -> None:
    cluster, scheduling = RecordingCluster(), RecordingScheduling()
    injector = _injector(cluster)
    context = FaultContext(cluster, scheduling=scheduling)  # type: ignore[arg-type]
    with injector.injected(DrainZone("zone-a", timeout_s=30), max_duration_s=60,
                           context=context) as targets:
        assert targets == ("a1", "a2")
    zone = "topology.kubernetes.io/zone=zone-a"
    assert scheduling.calls == [f"drain {zone} 30", f"uncordon {zone}"]
    assert injector.records[0].effects == (Effect.NODES_CORDONED, Effect.NODES_DRAINED)


def test_cordon_is_destructive_and_needs_its_adapter() -> None:
    polite = RecordingCluster(capabilities=frozenset())
    with pytest.raises(errors.FaultError, match="needs destructive"):
        _injector(polite).check(CordonZone("zone-a"))
    with pytest.raises(errors.FaultError, match="NodeScheduling adapter"), \
            _injector(RecordingCluster()).injected(CordonZone("zone-a"), max_duration_s=60):
        pass


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
