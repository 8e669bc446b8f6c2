"""Recorders see real API events: node readiness, a pod's life, lease holders, health."""

from __future__ import annotations

import pytest
from kubernetes import client

from zoneproof._util import waiting
from zoneproof.cluster.interface import Cluster
from zoneproof.measure import (
    HealthRecorder,
    LeaseRecorder,
    NodeReadyRecorder,
    PodRecorder,
    Timeline,
    recording,
)


@pytest.mark.default_bed
def test_pod_life_and_initial_node_state_are_recorded(
        cluster_under_test: Cluster, kube_api: client.ApiClient, core_v1: client.CoreV1Api,
        namespace: str) -> None:
    timeline = Timeline()
    recorders = [NodeReadyRecorder(kube_api), PodRecorder(kube_api, namespace, "app=rec"),
                 HealthRecorder(cluster_under_test)]
    with recording(timeline, recorders):  # type: ignore[arg-type]
        core_v1.create_namespaced_pod(namespace, {
            "metadata": {"name": "p", "labels": {"app": "rec"}},
            "spec": {"containers": [{"name": "c", "image": "fake"}]}})
        waiting.wait_for(lambda: (timeline.first("pod_ready", f"{namespace}/p") is not None,
                                  [e.kind for e in timeline.events]),
                         what="pod_ready recorded", timeout_s=30)
        core_v1.delete_namespaced_pod("p", namespace, grace_period_seconds=0)
        waiting.wait_for(lambda: (timeline.first("pod_deleted", f"{namespace}/p") is not None,
                                  [e.kind for e in timeline.events]),
                         what="pod_deleted recorded", timeout_s=30)
    kinds = [e.kind for e in timeline.select(subject=f"{namespace}/p")]
    assert kinds == ["pod_created", "pod_scheduled", "pod_ready", "pod_deleting", "pod_deleted"]
    assert timeline.first("pod_deleting").detail["grace"] == "0"  # type: ignore[union-attr]
    ready_nodes = {e.subject for e in timeline.select("node_ready", status="True", initial="True")}
    assert len(ready_nodes) == 6
    assert timeline.first("apiserver_ready", ready="True") is not None
    assert {e.subject for e in timeline.select("etcd_member", healthy="True")} == {
        "etcd-0", "etcd-1", "etcd-2"}


def test_lease_holder_changes_are_recorded(kube_api: client.ApiClient, namespace: str) -> None:
    leases = client.CoordinationV1Api(kube_api)
    timeline = Timeline()
    with recording(timeline, [LeaseRecorder(kube_api, namespace, "l")]):
        leases.create_namespaced_lease(namespace, {"metadata": {"name": "l"},
                                                   "spec": {"holderIdentity": "a"}})
        leases.patch_namespaced_lease("l", namespace, {"spec": {"holderIdentity": "b",
                                                                "leaseTransitions": 1}})
        waiting.wait_for(lambda: (len(list(timeline.select("lease_holder"))) >= 2, None),
                         what="two holder changes", timeout_s=20)
    events = list(timeline.select("lease_holder"))
    # created without leaseTransitions: no fencing token (""), not a token 0
    assert [(e.detail["holder"], e.detail["transitions"]) for e in events] == [("a", ""), ("b", "1")]
