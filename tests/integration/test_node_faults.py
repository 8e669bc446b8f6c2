"""Kubelet heartbeat faults on a private bed turn nodes NotReady through the real kcm."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import urllib3
from kubernetes import client, watch

from zoneproof._util import kube, waiting
from zoneproof.cluster._common import node_ready
from zoneproof.cluster.interface import WORKLOAD_IMAGE, Capability, Cluster
from zoneproof.cluster.local import pod_resync
from zoneproof.cluster.local.cluster import LocalCluster

pytestmark = pytest.mark.destructive
UNREACHABLE = "node.kubernetes.io/unreachable"
MARGIN_S = 20.0


class NotReadyRecorder:
    """Watches Nodes and records every (node, time) seen not Ready."""

    def __init__(self, bed: Cluster) -> None:
        self.core = client.CoreV1Api(kube.api_client(bed.kubeconfig))
        self.not_ready: list[tuple[str, float]] = []
        self._watch = watch.Watch()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            for event in self._watch.stream(self.core.list_node, timeout_seconds=300):
                node = event["object"]
                if not node_ready(node):
                    self.not_ready.append((node.metadata.name, time.monotonic()))
        except urllib3.exceptions.HTTPError:
            if not self._stopped.is_set():
                raise

    def __enter__(self) -> NotReadyRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._watch.stop()

    def nodes(self) -> set[str]:
        return {name for name, _ in self.not_ready}


def _taints(core: client.CoreV1Api, node: str) -> set[str]:
    return {t.key for t in core.read_node(node).spec.taints or []}


@pytest.fixture
def bed(private_bed: Callable[..., Cluster]) -> Iterator[Cluster]:
    yield private_bed(needs=(Capability.STOP_KUBELET,))


def test_zone_a_heartbeat_stop_turns_only_zone_a_not_ready_then_back(bed: Cluster) -> None:
    grace = 8.0  # ClusterSpec default node_monitor_grace_period_s
    zone_a = bed.nodes_by_zone()["zone-a"]
    core = client.CoreV1Api(kube.api_client(bed.kubeconfig))
    with NotReadyRecorder(bed) as recorder:
        stopped = time.monotonic()
        bed.zone_down("zone-a")
        bed.wait_nodes(zone_a, ready=False, timeout_s=grace + MARGIN_S)
        detection = time.monotonic() - stopped
        assert all(UNREACHABLE in _taints(core, n) for n in zone_a)
        bed.zone_up("zone-a")
        bed.wait_nodes(zone_a, ready=True, timeout_s=MARGIN_S)
    print(f"zone-a NotReady {detection:.2f}s after the heartbeat stopped")
    # the real node-lifecycle controller waits out the grace period before acting
    assert detection >= grace * 0.75
    assert recorder.nodes() == set(zone_a)


def test_one_node_stops_alone_and_recovers(bed: Cluster) -> None:
    victim = bed.nodes_by_zone()["zone-b"][0]
    with NotReadyRecorder(bed) as recorder:
        bed.stop_kubelet(victim)
        bed.wait_nodes([victim], ready=False, timeout_s=30)
        bed.start_kubelet(victim)
        bed.wait_nodes([victim], ready=True, timeout_s=30)
    core = client.CoreV1Api(kube.api_client(bed.kubeconfig))
    assert recorder.nodes() == {victim}
    waiting.wait_for(lambda: (UNREACHABLE not in _taints(core, victim), _taints(core, victim)),
                     what=f"kcm to lift the unreachable taint of {victim}", timeout_s=30)


def _pod_ready(core: client.CoreV1Api, name: str) -> tuple[bool, str]:
    conditions = core.read_namespaced_pod(name, "default").status.conditions or []
    status = next((c.status for c in conditions if c.type == "Ready"), "absent")
    return status == "True", status


def test_running_pod_is_unready_while_its_kubelet_is_gone_and_ready_again_after(
        bed: Cluster) -> None:
    """kcm marks the pods of a NotReady node unready; the returning (fake) kubelet reports
    them Ready again, as a real one does."""
    victim = bed.nodes_by_zone()["zone-c"][0]
    core = client.CoreV1Api(kube.api_client(bed.kubeconfig))
    stay = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600}
            for key in (UNREACHABLE, "node.kubernetes.io/not-ready")]
    core.create_namespaced_pod("default", {
        "metadata": {"name": "stays"},
        "spec": {"nodeName": victim, "tolerations": stay,
                 "containers": [{"name": "c", "image": WORKLOAD_IMAGE}]}})
    waiting.wait_for(lambda: _pod_ready(core, "stays"), what="pod Ready", timeout_s=30)
    bed.stop_kubelet(victim)
    waiting.wait_for(lambda: (not _pod_ready(core, "stays")[0], None),
                     what="kcm to mark the pod unready", timeout_s=30 + MARGIN_S)
    bed.start_kubelet(victim)
    waiting.wait_for(lambda: _pod_ready(core, "stays"), what="pod Ready again",
                     timeout_s=MARGIN_S)


def test_pods_a_restarted_fake_kubelet_dropped_are_reported_ready(bed: Cluster) -> None:
    """kwok#1464: a restarted kwok may drop its pods (its Lease cache lagging its take of the
    Lease); the local bed's resync reports them Ready once the new kwok holds the Lease. Here
    the dropping kwok is a stopped one: the Lease changes hands and the pod is unready, as after
    such a restart, and only the resync can make it Ready."""
    if not isinstance(bed, LocalCluster):
        pytest.skip(f"the resync is the local bed's (kwok); this bed is {bed.backend}'s")
    victim = bed.nodes_by_zone()["zone-a"][0]
    api = kube.api_client(bed.kubeconfig)
    core, coordination = client.CoreV1Api(api), client.CoordinationV1Api(api)
    core.create_namespaced_pod("default", {
        "metadata": {"name": "dropped"},
        "spec": {"nodeName": victim, "containers": [{"name": "c", "image": WORKLOAD_IMAGE}]}})
    waiting.wait_for(lambda: _pod_ready(core, "dropped"), what="pod Ready", timeout_s=30)
    before = pod_resync.holders(api, [victim])
    assert before and before[victim], before
    bed.stop_kubelet(victim)
    core.patch_namespaced_pod_status("dropped", "default", {"status": {"conditions": [
        {"type": "Ready", "status": "False"}, {"type": "ContainersReady", "status": "False"}]}})
    now = datetime.datetime.now(datetime.UTC)
    coordination.patch_namespaced_lease(victim, "kube-node-lease", {"spec": {
        "holderIdentity": "the-restarted-kwok", "renewTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}})
    assert _pod_ready(core, "dropped") == (False, "False")
    pod_resync.start(api, before, timeout_s=6.0)
    waiting.wait_for(lambda: _pod_ready(core, "dropped"), what="the resync to report it Ready",
                     timeout_s=pod_resync.SETTLE_S + 4.0)
