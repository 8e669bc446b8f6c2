"""What the recorders write for what they observe (their watch and poll loops run on real
beds in the integration and chaos suites; here: the observation logic, on fakes)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof.cluster.interface import Capability, ControlPlaneProcess
from zoneproof.measure import (
    HealthRecorder,
    LeaseRecorder,
    NodeHeartbeatRecorder,
    PodReadinessRecorder,
    Timeline,
)

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
API = client.ApiClient()


def _lease(name: str, holder: str, renewed_s: float, token: int | None = 0) -> Any:
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name),
        spec=SimpleNamespace(holder_identity=holder, lease_duration_seconds=6,
                             lease_transitions=token,
                             renew_time=T0 + dt.timedelta(seconds=renewed_s)))


def _kinds(timeline: Timeline) -> list[tuple[str, dict[str, str]]]:
    return [(e.kind, e.detail) for e in timeline.events]


def test_the_lease_recorder_writes_changes_of_holder_and_renewals() -> None:
    recorder = LeaseRecorder(API, "default", "l")
    recorder.timeline = Timeline()
    for obj, kind in ((_lease("l", "a", 0), "ADDED"), (_lease("l", "a", 0), "MODIFIED"),
                      (_lease("l", "a", 1), "MODIFIED"), (_lease("l", "", 1.5), "MODIFIED"),
                      (_lease("l", "b", 2, token=1), "MODIFIED"),
                      (_lease("l", "b", 2, token=1), "DELETED"),
                      (_lease("l", "c", 3, token=None), "ADDED")):
        recorder._observe(obj, kind, initial=kind == "ADDED")
    detail, recorded = {"duration_s": "6"}, {"renewals": "recorded"}  # no renewal: none made
    assert _kinds(recorder.timeline) == [
        ("lease_holder", {"holder": "a", **detail, "transitions": "0", **recorded}),
        ("lease_renewed", {"holder": "a", **detail, "transitions": "0"}),
        ("lease_holder", {"holder": "", **detail, "transitions": "0", **recorded}),
        ("lease_holder", {"holder": "b", **detail, "transitions": "1", **recorded}),
        ("lease_holder", {"holder": "", **detail, "transitions": "1", **recorded}),
        # a Lease without leaseTransitions (the Python client writes none): no token, not 0
        ("lease_holder", {"holder": "c", **detail, "transitions": "", **recorded})]


def test_the_heartbeat_recorder_writes_each_renewal_not_the_initial_list() -> None:
    recorder = NodeHeartbeatRecorder(API)
    recorder.timeline = Timeline()
    recorder._observe(_lease("n1", "n1", 0), "ADDED", initial=True)
    recorder._observe(_lease("n1", "n1", 0), "MODIFIED", initial=False)  # no new renewTime
    recorder._observe(_lease("n1", "n1", 1), "MODIFIED", initial=False)
    recorder._observe(_lease("n2", "n2", 1), "ADDED", initial=False)
    assert [(e.kind, e.subject) for e in recorder.timeline.events] == [
        ("node_heartbeat", "n1"), ("node_heartbeat", "n2")]


class FakeCluster:
    """Answers the health recorder's polls from its attributes."""

    capabilities = frozenset({Capability.ETCD_MEMBERS, Capability.CONTROL_PLANE})

    def __init__(self) -> None:
        self.ready, self.leader = True, "m0"
        self.running = {ControlPlaneProcess.CONTROLLER_MANAGER: True, ControlPlaneProcess.SCHEDULER: True}

    def apiserver_ready(self) -> bool:
        return self.ready

    def etcd_members(self) -> list[str]:
        return ["m0", "m1"]

    def etcd_member_healthy(self, member: str) -> bool:
        return bool(self.leader)

    def etcd_leader(self) -> str:
        if not self.leader:
            raise errors.FaultError("no leader now")
        return self.leader

    def component_running(self, component: ControlPlaneProcess) -> bool:
        return self.running[component]


def test_the_health_recorder_writes_changes_of_readiness_leader_and_processes() -> None:
    cluster = FakeCluster()
    now = [0.0]
    timeline = Timeline(clock=lambda: now[0])
    recorder = HealthRecorder(cluster, process_interval_s=5.0)  # type: ignore[arg-type]
    recorder.timeline = timeline
    recorder.sample()
    first = {(e.kind, e.subject): e.detail for e in timeline.events}
    assert first[("etcd_leader", "etcd")] == {"leader": "m0"}
    assert first[("process_alive", "kube-scheduler")] == {"alive": "True"}
    cluster.leader = ""
    cluster.running[ControlPlaneProcess.SCHEDULER] = False
    now[0] = 1.0  # processes are not polled again so soon
    recorder.sample()
    cluster.leader = "m1"
    now[0] = 2.0
    recorder.sample()
    now[0] = 5.0  # the process interval passed
    recorder.sample()
    later = [(e.kind, e.subject, e.detail) for e in timeline.events[len(first):]]
    assert later == [
        ("etcd_member", "m0", {"healthy": "False"}), ("etcd_member", "m1", {"healthy": "False"}),
        ("etcd_leader", "etcd", {"leader": ""}),
        ("etcd_member", "m0", {"healthy": "True"}), ("etcd_member", "m1", {"healthy": "True"}),
        ("etcd_leader", "etcd", {"leader": "m1"}),
        ("process_alive", "kube-scheduler", {"alive": "False"})]


def _pod(ready: str | None) -> Any:
    conditions = [] if ready is None else [SimpleNamespace(type="Ready", status=ready)]
    return SimpleNamespace(metadata=SimpleNamespace(namespace="ns", name="r-1"),
                           spec=SimpleNamespace(node_name="n1"),
                           status=SimpleNamespace(conditions=conditions))


def test_the_readiness_recorder_writes_each_change_of_ready() -> None:
    recorder = PodReadinessRecorder(API, "ns", "zoneproof.dev/resolver=names")
    recorder.timeline = Timeline()
    for obj, kind in ((_pod(None), "ADDED"), (_pod("True"), "MODIFIED"),
                      (_pod("True"), "MODIFIED"), (_pod("False"), "MODIFIED"),
                      (_pod("True"), "MODIFIED"), (_pod("True"), "DELETED")):
        recorder._observe(obj, kind, initial=False)
    assert [e.detail["ready"] for e in recorder.timeline.events] == [
        "None", "True", "False", "True", "Deleted"]
    assert {e.subject for e in recorder.timeline.events} == {"ns/r-1"}
