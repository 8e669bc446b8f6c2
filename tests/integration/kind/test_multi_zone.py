"""A 7-node multi-zone kind cluster: shape, zone spread, kubelet and node faults, components.

One cluster for the module (1 control plane + 2 workers in each of 3 zones); every test
leaves it whole again. Figures (up time, NotReady detection) are printed (``-s``).
"""

from __future__ import annotations

import ipaddress
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.cluster.interface import WORKLOAD_IMAGE, ControlPlaneProcess
from zoneproof.cluster.kind import KindCluster, docker
from zoneproof.components.harness import component
from zoneproof.components.harness import webhook as webhooks
from zoneproof.components.harness.registry import Kind
from zoneproof.measure import audit

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
UNREACHABLE = "node.kubernetes.io/unreachable"
GRACE_S = 8.0  # Timings default node_monitor_grace_period_s
MARGIN_S = 30.0
RESTORE_S = 180.0  # back to Ready after a fault: kubelet start-up on a loaded 2-core machine


@pytest.fixture(scope="module")
def kc(make_kind_cluster: Callable[..., KindCluster]) -> KindCluster:
    started = time.monotonic()
    made = make_kind_cluster(etcd_members=1)
    print(f"figure: kind up (7 nodes Ready) in {time.monotonic() - started:.1f}s")
    return made


@pytest.fixture(scope="module")
def core(kc: KindCluster) -> Iterator[client.CoreV1Api]:
    api = kube.api_client(kc.kubeconfig)
    yield client.CoreV1Api(api)
    api.close()


@pytest.fixture
def namespace(core: client.CoreV1Api, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"t-{request.node.name[:40].lower().replace('_', '-')}".rstrip("-")
    core.create_namespace({"metadata": {"name": name}})
    waiting.wait_for(lambda: (core.read_namespaced_service_account("default", name) is not None,
                              None),
                     what=f"ServiceAccount {name}/default", timeout_s=30,
                     ignore=(client.ApiException,))
    yield name
    core.delete_namespace(name)


def _taints(core: client.CoreV1Api, node: str) -> set[str]:
    return {t.key for t in core.read_node(node).spec.taints or []}


def test_every_node_ready_with_zone_and_region_labels(kc: KindCluster,
                                                      core: client.CoreV1Api) -> None:
    assert {z: len(n) for z, n in kc.nodes_by_zone().items()} == {
        "zone-a": 2, "zone-b": 2, "zone-c": 2}
    nodes = core.list_node().items
    assert len(nodes) == 7
    assert all(kc.nodes_ready().values())
    workers = [n for n in nodes if ZONE in (n.metadata.labels or {})]
    assert {n.metadata.labels[REGION] for n in workers} == {"region-1"}
    assert all(n.metadata.name.startswith(f"{kc.kind_name}-") for n in nodes)
    assert kc.status().healthy


def _spread_deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "spread"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "spread"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"topologySpreadConstraints": [{
                    "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": labels}}],
                    "containers": [{"name": "pause", "image": WORKLOAD_IMAGE,
                                    "imagePullPolicy": "Never"}]}}}}


def test_zone_spread_deployment_lands_two_per_zone_and_is_ready(
        kc: KindCluster, core: client.CoreV1Api, namespace: str) -> None:
    apps = client.AppsV1Api(core.api_client)
    apps.create_namespaced_deployment(namespace, _spread_deployment(6))

    def ready() -> tuple[bool, Any]:
        status = apps.read_namespaced_deployment(namespace=namespace, name="spread").status
        return status.ready_replicas == 6, status.ready_replicas

    waiting.wait_for(ready, what="6 spread replicas Ready", timeout_s=180, interval_s=1)
    zone_of = {n: z for z, names in kc.nodes_by_zone().items() for n in names}
    pods = core.list_namespaced_pod(namespace, label_selector="app=spread").items
    assert Counter(zone_of[p.spec.node_name] for p in pods) == {
        "zone-a": 2, "zone-b": 2, "zone-c": 2}


def test_kubelet_stop_turns_node_not_ready_through_kcm_then_back(
        kc: KindCluster, core: client.CoreV1Api) -> None:
    victim = kc.nodes_by_zone()["zone-a"][0]
    stopped = time.monotonic()
    kc.stop_kubelet(victim)
    try:
        kc.wait_nodes([victim], ready=False, timeout_s=GRACE_S + MARGIN_S)
        detection = time.monotonic() - stopped
        waiting.wait_for(lambda: (UNREACHABLE in _taints(core, victim), _taints(core, victim)),
                         what=f"unreachable taint on {victim}", timeout_s=MARGIN_S)
        others = [n for n, ready in kc.nodes_ready().items() if n != victim]
        assert others and all(kc.nodes_ready()[n] for n in others)
    finally:
        kc.start_kubelet(victim)
    kc.wait_nodes([victim], ready=True, timeout_s=RESTORE_S)
    print(f"figure: kubelet stop -> NotReady in {detection:.1f}s (grace {GRACE_S:g}s)")
    assert detection >= GRACE_S * 0.75  # the real node-lifecycle controller, not a shortcut
    waiting.wait_for(lambda: (UNREACHABLE not in _taints(core, victim), _taints(core, victim)),
                     what=f"kcm to lift the unreachable taint of {victim}", timeout_s=MARGIN_S)


def test_zone_down_takes_exactly_that_zone(kc: KindCluster) -> None:
    zone_b = kc.nodes_by_zone()["zone-b"]
    kc.zone_down("zone-b")
    try:
        kc.wait_nodes(zone_b, ready=False, timeout_s=GRACE_S + MARGIN_S)
        assert {n for n, ready in kc.nodes_ready().items() if not ready} == set(zone_b)
    finally:
        kc.zone_up("zone-b")
    kc.wait_nodes(zone_b, ready=True, timeout_s=RESTORE_S)


def test_paused_node_container_goes_not_ready_and_returns(kc: KindCluster) -> None:
    victim = kc.nodes_by_zone()["zone-c"][1]
    kc.pause_nodes([victim])
    try:
        kc.wait_nodes([victim], ready=False, timeout_s=GRACE_S + MARGIN_S)
        assert docker.state(victim) == "paused"
    finally:
        kc.unpause_nodes([victim])
    kc.wait_nodes([victim], ready=True, timeout_s=RESTORE_S)


def test_stopped_node_containers_go_not_ready_and_rejoin_at_their_addresses(
        kc: KindCluster) -> None:
    victims = kc.nodes_by_zone()["zone-c"]
    before = {v: docker.addresses(v) for v in victims}
    kc.stop_nodes(victims)
    try:
        kc.wait_nodes(victims, ready=False, timeout_s=GRACE_S + MARGIN_S)
        assert {docker.state(v) for v in victims} == {"exited"}
    finally:
        # highest address first: unpinned, docker would hand it the lower free one
        for victim in sorted(victims, key=lambda v: ipaddress.ip_address(before[v][0]),
                             reverse=True):
            kc.start_nodes([victim])
    assert {v: docker.addresses(v) for v in victims} == before
    kc.wait_nodes(victims, ready=True, timeout_s=RESTORE_S)


def test_killed_scheduler_stays_down_until_restarted(kc: KindCluster) -> None:
    from zoneproof.cluster.kind import nodes

    plane = kc.control_planes()[0]
    kc.kill_component(ControlPlaneProcess.SCHEDULER)
    try:
        waiting.wait_for(lambda: (not nodes.static_pod_running(plane, "kube-scheduler"), None),
                         what="kube-scheduler dead", timeout_s=30)
    finally:
        kc.restart_component(ControlPlaneProcess.SCHEDULER)
    assert nodes.static_pod_running(plane, "kube-scheduler")


def test_killed_apiserver_is_unready_until_restarted(kc: KindCluster) -> None:
    kc.kill_component(ControlPlaneProcess.APISERVER)
    try:
        waiting.wait_for(lambda: (not kc.apiserver_ready(), None),
                         what="kube-apiserver down", timeout_s=30)
    finally:
        kc.restart_component(ControlPlaneProcess.APISERVER)
    assert kc.apiserver_ready()


def test_webhook_on_the_host_is_called_by_the_apiserver_in_the_node(
        kc: KindCluster, tmp_path: Path) -> None:
    """The reference webhook binds the docker gateway; the API server calls it there."""
    running = webhooks.RunningWebhook(kc, component.Component(Kind.WEBHOOK), tmp_path)
    try:
        running.start()  # returns once a dry-run Deployment came back mutated
        assert running.url.startswith(f"https://{kc.host_address}:")
    finally:
        running.stop()


def test_client_identity_and_audit_log(kc: KindCluster, core: client.CoreV1Api,
                                       namespace: str, tmp_path: Path) -> None:
    """A CSR-issued identity acts; the audit log on the host says who deleted the pod."""
    group = "zoneproof:kind-probe"
    client.RbacAuthorizationV1Api(core.api_client).create_cluster_role_binding({
        "metadata": {"name": f"zp-kind-probe-{namespace}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]})
    kubeconfig = kc.client_kubeconfig("zp-hac-probe", (group,), tmp_path / "probe.kubeconfig")
    core.create_namespaced_pod(namespace, {"metadata": {"name": "victim"}, "spec": {
        "containers": [{"name": "c", "image": WORKLOAD_IMAGE,
                        "imagePullPolicy": "Never"}]}})
    as_probe = client.CoreV1Api(kube.api_client(kubeconfig))
    as_probe.delete_namespaced_pod("victim", namespace, grace_period_seconds=0)
    log = kc.audit_log()
    assert log is not None

    def audited() -> tuple[bool, list[str]]:
        users = [d.user for d in audit.pod_deletions(log, users_prefix="zp-hac-")
                 if d.namespace == namespace]
        return users == ["zp-hac-probe"], users

    waiting.wait_for(audited, what="the delete in the audit log", timeout_s=30)
