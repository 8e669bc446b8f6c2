"""The in-process model of the API server's validation (conformance/ha_config/validation.py)
words each refusal as the real kube-apiserver does: a grid of HPA counts and workload fields,
created and updated, each answer compared with ``validation.refusal`` (None: accepted).

The generated webhook suite expects these words through the API server; a wrong model there
fails a correct webhook (CI once failed on an HPA whose maxReplicas went below 1)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from zoneproof.conformance.ha_config import validation

HPA = "HorizontalPodAutoscaler"
COUNTS = (None, -2, -1, 0, 1, 2, 5)
MAXIMA = (-3, -1, 0, 1, 3, 7)
EXTERNAL = {"type": "External", "external": {"metric": {"name": "queue"},
                                             "target": {"type": "Value", "value": "1"}}}


def hpa(name: str, low: int | None, high: int, *,
        metrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
                        "maxReplicas": high}
    if low is not None:
        spec["minReplicas"] = low
    if metrics is not None:
        spec["metrics"] = metrics
    return {"apiVersion": "autoscaling/v2", "kind": HPA, "metadata": {"name": name}, "spec": spec}


def deployment(name: str, replicas: int, values: list[str] | None) -> dict[str, Any]:
    labels = {"app": name}
    pod: dict[str, Any] = {"containers": [{"name": "c", "image": "fake"}]}
    if values is not None:
        pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": values}]}]}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "paused": True, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod}}}


def answer(write: Callable[..., object], *args: object) -> str | None:
    """The API server's refusal of ``write(*args)``, or None when it was accepted."""
    try:
        write(*args)
    except ApiException as e:
        assert e.status == validation.UNPROCESSABLE, e.body
        return str(json.loads(e.body)["message"])
    return None


def replace(api: client.AutoscalingV2Api, namespace: str, obj: dict[str, Any]) -> None:
    """Replace HPA u with ``obj``, re-reading on a conflict (the HPA controller writes its status)."""
    for _ in range(20):
        stored = api.read_namespaced_horizontal_pod_autoscaler("u", namespace)
        body = {**obj, "metadata": {"name": "u", "resourceVersion": stored.metadata.resource_version}}
        try:
            api.replace_namespaced_horizontal_pod_autoscaler("u", namespace, body)
            return
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError("20 conflicts in a row replacing HPA u")


@pytest.mark.default_bed
def test_hpa_refusals_match_the_model_on_create_and_update(
        namespace: str, kube_api: client.ApiClient) -> None:
    api = client.AutoscalingV2Api(kube_api)
    wrong = []
    for i, (low, high) in enumerate(itertools.product(COUNTS, MAXIMA)):
        for metrics in (None, [EXTERNAL]) if low == 0 else (None,):
            obj = hpa(f"c{i}-{len(metrics or ())}", low, high, metrics=metrics)
            got = answer(api.create_namespaced_horizontal_pod_autoscaler, namespace, obj)
            if got != validation.refusal(HPA, obj):
                wrong.append(f"CREATE {obj['spec']}:\n  API server: {got}\n  model:      "
                             f"{validation.refusal(HPA, obj)}")
    api.create_namespaced_horizontal_pod_autoscaler(namespace, hpa("u", 5, 7))
    for low, high in itertools.product((None, -1, 0, 1, 5, 12), (-1, 0, 1, 7)):
        obj = hpa("u", low, high)
        got = answer(replace, api, namespace, obj)
        if got is None:
            replace(api, namespace, hpa("u", 5, 7))
        if got != validation.refusal(HPA, obj):
            wrong.append(f"UPDATE from 5..7 to {obj['spec']}:\n  API server: {got}\n  model:      "
                         f"{validation.refusal(HPA, obj)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.default_bed
def test_workload_refusals_match_the_model(namespace: str, apps_v1: client.AppsV1Api) -> None:
    wrong = []
    grid = itertools.product((-1, 0, 2), (None, [], ["zone-a"], [" a", "b"], ["x" * 63, "x" * 64],
                                          ["x" * 63 + "-"], ["-" * 64]))
    for i, (replicas, values) in enumerate(grid):
        obj = deployment(f"d{i}", replicas, values)
        got = answer(apps_v1.create_namespaced_deployment, namespace, obj)
        if got != validation.refusal("Deployment", obj):
            wrong.append(f"CREATE replicas {replicas}, values {values}:\n  API server: {got}\n"
                         f"  model:      {validation.refusal('Deployment', obj)}")
    assert not wrong, "\n".join(wrong)
