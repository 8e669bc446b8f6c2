"""The shared default bed: 6 Ready nodes, 2 per zone, and zone spread that really schedules
(skipped on a cluster zoneproof did not make); the evidence names what any cluster reports."""

from __future__ import annotations

from collections import Counter

import pytest
from kubernetes import client

from zoneproof._util import waiting
from zoneproof.binaries.pins import PINS
from zoneproof.cluster.interface import Backend, Cluster
from zoneproof.report import evidence

ZONE = "topology.kubernetes.io/zone"


@pytest.mark.default_bed
def test_six_ready_nodes_two_per_zone_with_topology_labels(
        cluster_under_test: Cluster, core_v1: client.CoreV1Api) -> None:
    nodes = core_v1.list_node().items
    assert len(nodes) == 6
    assert Counter(n.metadata.labels[ZONE] for n in nodes) == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    for node in nodes:
        labels = node.metadata.labels
        assert labels["kubernetes.io/hostname"] == node.metadata.name
        assert labels["topology.kubernetes.io/region"] == "region-1"
        ready = [c for c in node.status.conditions if c.type == "Ready"]
        assert ready and ready[0].status == "True", node.metadata.name
    assert cluster_under_test.apiserver_ready()


@pytest.mark.default_bed
def test_zone_spread_deployment_lands_two_per_zone_and_ready(
        namespace: str, apps_v1: client.AppsV1Api, core_v1: client.CoreV1Api) -> None:
    labels = {"app": "spread"}
    apps_v1.create_namespaced_deployment(namespace, {
        "metadata": {"name": "spread"},
        "spec": {"replicas": 6, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "fake"}],
                     "topologySpreadConstraints": [{
                         "maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                         "labelSelector": {"matchLabels": labels}}]}}}})

    def all_ready() -> tuple[bool, str]:
        d = apps_v1.read_namespaced_deployment("spread", namespace)
        return d.status.ready_replicas == 6, f"ready={d.status.ready_replicas}"

    waiting.wait_for(all_ready, what="6 ready replicas", timeout_s=60)
    zone_of = {n.metadata.name: n.metadata.labels[ZONE] for n in core_v1.list_node().items}
    pods = core_v1.list_namespaced_pod(namespace, label_selector="app=spread").items
    assert Counter(zone_of[p.spec.node_name] for p in pods) == {"zone-a": 2, "zone-b": 2,
                                                                  "zone-c": 2}
    assert all(p.status.phase == "Running" for p in pods)


def test_cluster_evidence_names_what_the_cluster_reports(
        cluster_under_test: Cluster, core_v1: client.CoreV1Api, zp_backend: Backend) -> None:
    """The versions a certification bundle records are read from the cluster itself: the API
    server's version, etcd's from its metrics, the nodes per zone (unlabelled ones as
    "(none)"); a bed zoneproof made runs the pinned versions in the default shape."""
    measured = evidence.measure_cluster(cluster_under_test.kubeconfig)
    reported = client.VersionApi(core_v1.api_client).get_code().git_version
    assert measured["kubernetes"]["gitVersion"] == reported
    zones = Counter((n.metadata.labels or {}).get(ZONE, "(none)") for n in core_v1.list_node().items)
    assert measured["nodes"]["zones"] == dict(zones)
    if not zp_backend.traits.makes_clusters:
        return  # a user's cluster: its versions and shape are its owner's
    assert reported == PINS.kubernetes
    # API servers that still export etcd_version_info name it; 1.37 does not, and the report
    # says so instead of guessing
    assert measured["etcd"] in (PINS.etcd.removeprefix("v"),
                                "not measured: the API server's metrics have no etcd_version_info")
    assert measured["nodes"]["zones"] == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
