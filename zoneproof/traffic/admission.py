"""Admission attempts through the webhook under test, each recorded on the run's Timeline.

A *selected* workload is a Deployment in a namespace the webhook selects (labelled
``keys.LABEL_CONSIDER``); with failurePolicy Fail its creates and updates are rejected
while the webhook is down. Every attempt adds ``admission_ok`` or ``admission_failed``
{operation, selected, reason}: ``slo.metrics.failed_admissions`` counts failures outside
fault windows.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from zoneproof.cluster import interface
from zoneproof.measure import Timeline
from zoneproof.specs.ha_config import keys
from zoneproof.traffic import workloads

__all__ = ["PROBE_DEPLOYMENT", "attempt", "prepare"]

PROBE_DEPLOYMENT = "admission-probe"
_TIMEOUT_S = 15.0


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": "zoneproof-admission-probe"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {keys.LABEL_TYPE: keys.TYPE_SERVER}},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": interface.WORKLOAD_IMAGE}]}}}}


def prepare(api: client.ApiClient, *, selected: str, unselected: str) -> None:
    """Create both namespaces and, in each, the Deployment later updates patch."""
    apps = client.AppsV1Api(api)
    for name, labels in ((selected, {keys.LABEL_CONSIDER: "true"}), (unselected, {})):
        workloads.create_namespace(api, name, labels=labels)
        apps.create_namespaced_deployment(name, _deployment(PROBE_DEPLOYMENT))


def attempt(api: client.ApiClient, timeline: Timeline, *, namespace: str, selected: bool,
            operation: str) -> bool:
    """One dry-run ``operation`` (create|update) of a Deployment in ``namespace``; admitted?"""
    apps = client.AppsV1Api(api)
    try:
        if operation == "create":
            apps.create_namespaced_deployment(namespace, _deployment("admission-try"),
                                              dry_run="All", _request_timeout=_TIMEOUT_S)
        else:
            apps.patch_namespaced_deployment(
                PROBE_DEPLOYMENT, namespace,
                {"metadata": {"annotations": {"zoneproof.dev/touched": "yes"}}},
                dry_run="All", _request_timeout=_TIMEOUT_S)
    except client.ApiException as exc:
        timeline.add("admission_failed", f"{namespace}/{operation}", operation=operation,
                     selected=str(selected), reason=f"{exc.status} {exc.reason}")
        return False
    timeline.add("admission_ok", f"{namespace}/{operation}", operation=operation,
                 selected=str(selected))
    return True
