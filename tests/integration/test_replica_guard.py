"""zoneproof's beds refuse workloads and HPAs asking for more replicas than the bed can hold
(zoneproof/cluster/replica_guard.py): a StatefulSet of 2^31 - 1 replicas once took a bed's
controller manager to 22 GB and starved CI for an hour. Sent with dryRun: nothing is stored."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from zoneproof.cluster import replica_guard

MOST = replica_guard.MOST_REPLICAS


def refusal(write: Callable[..., object], *args: object) -> str | None:
    """The API server's refusal of ``write(*args, dry_run="All")``, or None when accepted."""
    try:
        write(*args, dry_run="All")
    except ApiException as e:
        return str(json.loads(e.body)["message"])
    return None


def statefulset(replicas: int) -> dict[str, object]:
    labels = {"app": "big"}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "big"},
            "spec": {"replicas": replicas, "serviceName": "big", "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "fake"}]}}}}


def hpa(low: int) -> dict[str, object]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "big"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "big"},
                     "minReplicas": low, "maxReplicas": max(low, 2 * MOST)}}


@pytest.mark.default_bed
def test_the_bed_refuses_more_replicas_than_it_can_hold(namespace: str, kube_api: client.ApiClient) -> None:
    apps, autoscaling = client.AppsV1Api(kube_api), client.AutoscalingV2Api(kube_api)
    create_sts, create_deploy = apps.create_namespaced_stateful_set, apps.create_namespaced_deployment
    create_hpa = autoscaling.create_namespaced_horizontal_pod_autoscaler
    assert refusal(create_sts, namespace, statefulset(MOST)) is None
    assert refusal(create_hpa, namespace, hpa(MOST)) is None
    for answer in (refusal(create_sts, namespace, statefulset((1 << 31) - 1)),
                   refusal(create_deploy, namespace, replica_guard.probe_body(MOST + 1)),
                   refusal(create_hpa, namespace, hpa(MOST + 1))):
        assert answer is not None and "zoneproof bed guard" in answer and f"above {MOST}" in answer, answer


@pytest.mark.default_bed
def test_scaling_past_the_bound_is_refused(namespace: str, kube_api: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube_api)
    apps.create_namespaced_stateful_set(namespace, statefulset(0))
    try:
        answer = refusal(apps.patch_namespaced_stateful_set_scale, "big", namespace,
                         {"spec": {"replicas": MOST + 1}})
        assert answer is not None and "zoneproof bed guard" in answer, answer
        assert refusal(apps.patch_namespaced_stateful_set_scale, "big", namespace,
                       {"spec": {"replicas": 2}}) is None
    finally:
        apps.delete_namespaced_stateful_set("big", namespace)
