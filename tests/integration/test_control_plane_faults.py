"""Killing and restarting kube-apiserver, kcm and the scheduler on a private bed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import urllib3
from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.cluster.interface import Capability, Cluster, ControlPlaneProcess

pytestmark = pytest.mark.destructive
#: How long a stopped controller must stay without effect (kcm/scheduler act in < 1 s).
_QUIET_S = 3.0


def _pod(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "fake"}]}}


def test_control_plane_processes_die_and_come_back(private_bed: Callable[..., Cluster]) -> None:
    bed = private_bed(needs=(Capability.CONTROL_PLANE,))
    core = client.CoreV1Api(kube.api_client(bed.kubeconfig, retries=0))

    bed.kill_component(ControlPlaneProcess.APISERVER)
    assert not bed.apiserver_ready()
    with pytest.raises(urllib3.exceptions.HTTPError):
        core.list_node(_request_timeout=2)
    bed.restart_component(ControlPlaneProcess.APISERVER)
    assert bed.apiserver_ready()
    assert len(core.list_node().items) == 6

    # without a scheduler a new pod stays unscheduled; the restarted one binds it
    bed.kill_component(ControlPlaneProcess.SCHEDULER)
    core.create_namespaced_pod("default", _pod("waits-for-scheduler"))

    def bound() -> tuple[bool, None]:
        return bool(core.read_namespaced_pod("waits-for-scheduler", "default").spec.node_name), None

    with pytest.raises(waiting.WaitTimeout):
        waiting.wait_for(bound, what="a bind with no scheduler running", timeout_s=_QUIET_S)
    bed.restart_component(ControlPlaneProcess.SCHEDULER)
    waiting.wait_for(bound, what="the restarted scheduler to bind the pod", timeout_s=30)

    # without kcm a ReplicaSet makes no pods; the restarted kcm does
    bed.kill_component(ControlPlaneProcess.CONTROLLER_MANAGER)
    apps = client.AppsV1Api(core.api_client)
    labels = {"app": "rs"}
    apps.create_namespaced_replica_set("default", {
        "metadata": {"name": "rs"},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "c", "image": "fake"}]}}}})

    def two_pods() -> tuple[bool, int]:
        count = len(core.list_namespaced_pod("default", label_selector="app=rs").items)
        return count == 2, count

    with pytest.raises(waiting.WaitTimeout):
        waiting.wait_for(two_pods, what="pods with no kcm running", timeout_s=_QUIET_S)
    bed.restart_component(ControlPlaneProcess.CONTROLLER_MANAGER)
    waiting.wait_for(two_pods, what="the restarted kcm to create the ReplicaSet's pods",
                     timeout_s=60)
    assert all(bed.status().processes.values())
