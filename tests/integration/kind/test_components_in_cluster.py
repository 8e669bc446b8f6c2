"""The reference components as in-cluster workloads on kind: offline images, deploy/ manifests.

One 3-zone kind cluster for the module: the image archive (``zoneproof build --images``) is
loaded into every node with no registry, deploy/ is rendered (images, serving certificate,
caBundle) and applied; then: no image was pulled, each Deployment's replicas run in distinct
zones, the API server admits through the webhook's Service, and the controller holds its
Lease as its pod and force-deletes as its ServiceAccount (from the API server's audit log).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.binaries.images import ImagesResult, build_component_images
from zoneproof.binaries.nodeimage import recipe as node_recipe
from zoneproof.binaries.pins import PINS
from zoneproof.cluster.kind import KindCluster
from zoneproof.components import manifests
from zoneproof.measure.audit import POD_NAME_EXTRA
from zoneproof.specs.ha_config import keys

NS = manifests.NAMESPACE
COMPONENTS = ("ha-config-webhook", "ha-controller")
ROLLOUT_TIMEOUT_S = 300.0
CONTROLLER_SA = f"system:serviceaccount:{NS}:ha-controller"
#: An image every node has (kubeadm's pause): workloads of the tests never pull.
PRESENT = {"image": node_recipe.kubeadm_images(PINS)["pause"], "imagePullPolicy": "Never"}


@pytest.fixture(scope="module")
def images() -> ImagesResult:
    try:
        return build_component_images(progress=print)
    except errors.BinaryError as exc:
        if shutil.which("debootstrap") is None or os.geteuid() != 0:
            pytest.skip(f"the component images need building, as root with debootstrap: {exc}")
        raise


@dataclass(frozen=True, slots=True)
class Deployed:
    cluster: KindCluster
    rendered: manifests.Rendered
    load_s: float
    rollout_s: float


def _ready(apps: client.AppsV1Api, name: str) -> tuple[bool, str]:
    d = apps.read_namespaced_deployment(name, NS)
    ready, wanted = d.status.ready_replicas or 0, d.spec.replicas
    return ready == wanted and d.status.updated_replicas == wanted, f"{ready}/{wanted} ready"


@pytest.fixture(scope="module")
def deployed(make_kind_cluster: Callable[..., KindCluster], images: ImagesResult
             ) -> Iterator[Deployed]:
    cluster = make_kind_cluster(etcd_members=1)  # one control plane: the audit log is on it
    started = time.monotonic()
    cluster.load_image_archive(images.archive)
    load_s = time.monotonic() - started
    rendered = manifests.render(images={
        ref.rsplit(":", 1)[0]: ref for _, ref in images.images})
    started = time.monotonic()
    manifests.apply(rendered, cluster.kubeconfig)
    apps = client.AppsV1Api(kube.api_client(cluster.kubeconfig))
    for name in COMPONENTS:
        waiting.wait_for(lambda n=name: _ready(apps, n), what=f"Deployment {NS}/{name} rolled out",
                         timeout_s=ROLLOUT_TIMEOUT_S, interval_s=1.0)
    rollout_s = time.monotonic() - started
    print(f"figures: archive {images.size_bytes / 2**20:.0f} MiB loaded into "
          f"{len(cluster.containers())} nodes in {load_s:.1f}s; both Deployments rolled out "
          f"in {rollout_s:.1f}s")
    yield Deployed(cluster, rendered, load_s, rollout_s)
    manifests.delete(rendered, cluster.kubeconfig)


def _core(d: Deployed) -> client.CoreV1Api:
    return client.CoreV1Api(kube.api_client(d.cluster.kubeconfig))


def _pods(d: Deployed, component: str) -> list[Any]:
    return list(_core(d).list_namespaced_pod(
        NS, label_selector=f"app.kubernetes.io/name={component}").items)


def _zone_of(d: Deployed) -> dict[str, str]:
    return {n.metadata.name: (n.metadata.labels or {}).get(keys.TOPOLOGY_ZONE, "")
            for n in _core(d).list_node().items}


def test_images_run_without_a_pull(deployed: Deployed) -> None:
    events = _core(deployed).list_namespaced_event(NS).items
    assert [e.message for e in events if e.reason == "Pulling"] == []
    pulled = [e.message for e in events if e.reason == "Pulled"]
    assert pulled and all("already present on machine" in m for m in pulled), pulled
    for component in COMPONENTS:
        for pod in _pods(deployed, component):
            assert pod.spec.containers[0].image == deployed.rendered.find(
                "Deployment", component)["spec"]["template"]["spec"]["containers"][0]["image"]


def test_replicas_run_in_distinct_zones_as_non_root(deployed: Deployed) -> None:
    zones = _zone_of(deployed)
    for component in COMPONENTS:
        pods = _pods(deployed, component)
        where = [zones[p.spec.node_name] for p in pods]
        assert len(pods) == 2 and len(set(where)) == 2 and all(where), (component, where)
        for pod in pods:
            status = pod.status.container_statuses[0]
            assert status.ready and status.restart_count == 0, (pod.metadata.name, status)


def test_a_third_replica_goes_to_the_third_zone(deployed: Deployed) -> None:
    apps = client.AppsV1Api(kube.api_client(deployed.cluster.kubeconfig))
    apps.patch_namespaced_deployment_scale("ha-config-webhook", NS, {"spec": {"replicas": 3}})
    try:
        waiting.wait_for(lambda: _ready(apps, "ha-config-webhook"), what="3 webhook replicas",
                         timeout_s=ROLLOUT_TIMEOUT_S, interval_s=1.0)
        zones = _zone_of(deployed)
        assert sorted(zones[p.spec.node_name] for p in _pods(deployed, "ha-config-webhook")) == \
            sorted(set(deployed.cluster.spec.zones))
    finally:
        apps.patch_namespaced_deployment_scale("ha-config-webhook", NS, {"spec": {"replicas": 2}})
        # the next test calls the webhook through its Service: the third pod must be gone, not
        # shutting down behind an endpoint (the API server once met its EOF there)
        waiting.wait_for(lambda: _scaled_to_two(deployed, apps), what="2 webhook replicas, the third gone",
                         timeout_s=ROLLOUT_TIMEOUT_S, interval_s=1.0)


def _scaled_to_two(d: Deployed, apps: client.AppsV1Api) -> tuple[bool, str]:
    ready, seen = _ready(apps, "ha-config-webhook")
    pods = len(_pods(d, "ha-config-webhook"))
    return ready and pods == 2, f"{seen}, {pods} pods"


def _probe(namespace: str) -> dict[str, Any]:
    labels = {"app": "probe"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "probe", "namespace": namespace,
                         "labels": {keys.LABEL_TYPE: keys.TYPE_SERVER},
                         "annotations": {keys.ANNOTATION_REPLICAS: "3"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", **PRESENT}]}}}}


def test_webhook_admits_through_its_service(deployed: Deployed) -> None:
    core = _core(deployed)
    apps = client.AppsV1Api(kube.api_client(deployed.cluster.kubeconfig))
    considered, ignored = (f"zp-in-cluster-{uuid.uuid4().hex[:6]}" for _ in range(2))
    core.create_namespace({"metadata": {"name": considered, "labels": {keys.LABEL_CONSIDER: "true"}}})
    core.create_namespace({"metadata": {"name": ignored}})
    try:
        plain = apps.create_namespaced_deployment(ignored, _probe(ignored))
        try:
            mutated = apps.create_namespaced_deployment(considered, _probe(considered))
        except client.ApiException as exc:
            pytest.fail(f"admission through the Service failed: {exc.body}\n{_serving(deployed)}")
        assert not plain.spec.template.spec.topology_spread_constraints
        spread = mutated.spec.template.spec.topology_spread_constraints
        assert spread and {c.topology_key for c in spread} >= {keys.TOPOLOGY_HOSTNAME}, spread
    finally:
        core.delete_namespace(considered)
        core.delete_namespace(ignored)


def _serving(d: Deployed) -> str:
    """The webhook's pods (ready, restarts) and the Service's endpoints, for a failure message."""
    pods = [(p.metadata.name, p.spec.node_name,
             [(c.ready, c.restart_count) for c in p.status.container_statuses or []])
            for p in _pods(d, "ha-config-webhook")]
    slices = client.DiscoveryV1Api(kube.api_client(d.cluster.kubeconfig)).list_namespaced_endpoint_slice(
        NS, label_selector="kubernetes.io/service-name=ha-config-webhook").items
    endpoints = [(e.addresses, e.conditions.ready) for s in slices for e in s.endpoints or []]
    events = [f"{e.reason}: {e.message}" for e in _core(d).list_namespaced_event(NS).items
              if e.type == "Warning"]
    return f"pods {pods}; endpoints {endpoints}; warnings {events[-10:]}"


def _lease_holder(d: Deployed) -> str:
    namespace, name = manifests.CONTROLLER_LEASE
    return kube.lease_holder(kube.api_client(d.cluster.kubeconfig), namespace, name)


def _audited_deletes(log: Path, pod: str) -> list[dict[str, Any]]:
    found = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        ref = event.get("objectRef") or {}
        if (event.get("stage") == "ResponseComplete" and event.get("verb") == "delete"
                and ref.get("resource") == "pods" and ref.get("name") == pod):
            found.append(event)
    return found


def test_controller_leads_as_its_pod_and_deletes_as_its_service_account(deployed: Deployed) -> None:
    holder = _lease_holder(deployed)
    assert holder in {p.metadata.name for p in _pods(deployed, "ha-controller")}
    core = _core(deployed)
    busy = {p.spec.node_name for c in COMPONENTS for p in _pods(deployed, c)}
    node = next(n for n, zone in sorted(_zone_of(deployed).items()) if zone and n not in busy)
    namespace = f"zp-in-cluster-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": namespace}})
    pod = {"metadata": {"name": "noobaa-0", "labels": {"app": "noobaa"}},
           "spec": {"nodeName": node, "terminationGracePeriodSeconds": 600,
                    "containers": [{"name": "c", **PRESENT}]}}
    core.create_namespaced_pod(namespace, pod)
    audit_log = deployed.cluster.audit_log()
    assert audit_log is not None
    try:
        deployed.cluster.stop_kubelet(node)

        def gone() -> tuple[bool, str]:
            try:
                core.read_namespaced_pod("noobaa-0", namespace)
            except client.ApiException as exc:
                if exc.status == 404:
                    return True, "deleted"
                raise
            return False, "still there"

        waiting.wait_for(gone, what=f"the controller to force-delete noobaa-0 of NotReady {node}",
                         timeout_s=120, interval_s=1.0)
    finally:
        deployed.cluster.start_kubelet(node)
        core.delete_namespace(namespace)
    events = _audited_deletes(audit_log, "noobaa-0")
    ours = [e["user"] for e in events if e["user"]["username"] == CONTROLLER_SA]
    assert ours, f"no delete of noobaa-0 by {CONTROLLER_SA} in {audit_log}: {events}"
    assert [u.get("extra", {}).get(POD_NAME_EXTRA) for u in ours] == [[_lease_holder(deployed)]]
    deployed.cluster.wait_nodes([node], ready=True, timeout_s=120)
