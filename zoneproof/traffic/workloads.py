"""The workloads experiments protect: a StatefulSet ``db`` and a Deployment ``core``,
spread over zones, labelled for the HA controller, optionally under a PDB each."""

from __future__ import annotations

import contextlib
from typing import Any

from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.cluster import interface
from zoneproof.runs import sweep
from zoneproof.specs import kubernetes

__all__ = ["WORKLOADS", "apply", "create_namespace", "delete_namespace", "is_ready", "ready_pods",
           "zone_spread"]

WORKLOADS = ("db", "core")


def zone_spread(labels: dict[str, str]) -> list[dict[str, Any]]:
    """A pod template's topology spread: the pods ``labels`` select, one per zone in turn
    (a preference: a zone down does not block them)."""
    return [{"maxSkew": 1, "topologyKey": kubernetes.ZONE_LABEL,
             "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}]


def is_ready(pod: Any) -> bool:
    """The pod is live (not being deleted) and its Ready condition is True."""
    return pod.metadata.deletion_timestamp is None and any(
        c.type == "Ready" and c.status == "True" for c in pod.status.conditions or ())


def _template(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {
        "topologySpreadConstraints": zone_spread(labels), "terminationGracePeriodSeconds": 5,
        "containers": [{"name": "c", "image": interface.WORKLOAD_IMAGE}]}}


def create_namespace(api: client.ApiClient, name: str, *, labels: dict[str, str] | None = None,
                     annotations: dict[str, str] | None = None) -> None:
    """Create namespace ``name`` (if missing) and wait for its default ServiceAccount (pods
    cannot be created before it exists)."""
    core = client.CoreV1Api(api)
    with contextlib.suppress(client.ApiException):
        core.create_namespace(sweep.labelled({"metadata": {
            "name": name, "labels": labels or {}, "annotations": annotations or {}}}))
    waiting.wait_for(
        lambda: (core.read_namespaced_service_account("default", name) is not None, None),
        what=f"default ServiceAccount in {name}", timeout_s=30, ignore=(client.ApiException,))


def apply(api: client.ApiClient, *, namespace: str, selector: str, replicas: int,
          pdb_max_unavailable: int) -> None:
    """Create the namespace and both workloads (PDBs when ``pdb_max_unavailable`` > 0)."""
    apps, policy = client.AppsV1Api(api), client.PolicyV1Api(api)
    create_namespace(api, namespace)
    base = kubernetes.matching_labels(selector)
    for name, create, extra in (("db", apps.create_namespaced_stateful_set,
                                 {"serviceName": "db", "podManagementPolicy": "Parallel"}),
                                ("core", apps.create_namespaced_deployment, {})):
        labels = {**base, "workload": name}
        create(namespace, {"metadata": {"name": name}, "spec": {
            "replicas": replicas, "selector": {"matchLabels": labels},
            "template": _template(labels), **extra}})
        if pdb_max_unavailable > 0:
            policy.create_namespaced_pod_disruption_budget(namespace, {
                "metadata": {"name": name}, "spec": {
                    "maxUnavailable": pdb_max_unavailable,
                    "selector": {"matchLabels": labels}}})


def ready_pods(core: client.CoreV1Api, namespace: str, workload: str) -> dict[str, str]:
    """Live, Ready pods of ``workload``: name → node."""
    pods = core.list_namespaced_pod(namespace, label_selector=f"workload={workload}").items
    return {p.metadata.name: p.spec.node_name for p in pods if is_ready(p)}


def delete_namespace(core: client.CoreV1Api, namespace: str, *, timeout_s: float) -> None:
    """Delete ``namespace`` and wait until it is gone (so the next run can reuse the name)."""
    kube.delete_namespace(core, namespace)
    waiting.wait_for(lambda: kube.namespace_gone(core, namespace),
                     what=f"namespace {namespace} deleted", timeout_s=timeout_s, interval_s=0.5)
