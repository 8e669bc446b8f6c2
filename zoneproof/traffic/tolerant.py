"""A workload the webhook under test makes zone-failure tolerant, and how it is spread.

Its namespace is selected by the webhook with failure tolerance ``zone`` over the
cluster's zones; its Deployment is of type ``server``, asks for its replica count through
the webhook's replicas annotation (the table value would be 2) and states no spread of its
own, so any zone spread it has is the webhook's mutation.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof.cluster import interface
from zoneproof.specs.ha_config import keys
from zoneproof.traffic import workloads

__all__ = ["NAME", "apply", "guaranteed_available", "ready_per_zone", "zone_spread"]

NAME = "tolerant"
_LABELS = {"app": "zoneproof-zone-tolerant"}


def apply(api: client.ApiClient, *, namespace: str, zones: list[str], replicas: int) -> None:
    """Create the webhook-selected namespace and the Deployment (mutated on admission)."""
    workloads.create_namespace(
        api, namespace, labels={keys.LABEL_CONSIDER: "true"},
        annotations={keys.ANNOTATION_FAILURE_TOLERANCE_TYPE: "zone",
                     keys.ANNOTATION_ZONES: ",".join(zones)})
    client.AppsV1Api(api).create_namespaced_deployment(namespace, {
        "metadata": {"name": NAME, "labels": {keys.LABEL_TYPE: keys.TYPE_SERVER},
                     "annotations": {keys.ANNOTATION_REPLICAS: str(replicas)}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": _LABELS}, "template": {
            "metadata": {"labels": _LABELS},
            "spec": {"terminationGracePeriodSeconds": 5,
                     "containers": [{"name": "c", "image": interface.WORKLOAD_IMAGE}]}}}})


def zone_spread(api: client.ApiClient, namespace: str) -> dict[str, Any]:
    """The zone topology spread constraint the webhook put on the Deployment.

    FaultError when there is none: the webhook under test did not make it zone tolerant.
    """
    deployment = client.AppsV1Api(api).read_namespaced_deployment(NAME, namespace)
    for constraint in deployment.spec.template.spec.topology_spread_constraints or ():
        if constraint.topology_key == keys.TOPOLOGY_ZONE:
            return {"max_skew": constraint.max_skew,
                    "when_unsatisfiable": constraint.when_unsatisfiable,
                    "replicas": deployment.spec.replicas}
    raise errors.FaultError(f"deployment {namespace}/{NAME} has no zone topology spread "
                            "constraint: the webhook under test did not mutate it")


def guaranteed_available(replicas: int, zones: int) -> int:
    """Pods a zone spread of maxSkew 1 keeps outside any one lost zone: at most
    ceil(replicas / zones) share a zone (pure)."""
    return replicas - math.ceil(replicas / zones) if zones > 0 else 0


def ready_per_zone(api: client.ApiClient, namespace: str, node_zones: dict[str, str]
                   ) -> dict[str, int]:
    """Ready, non-terminating pods of the Deployment per zone (every zone listed)."""
    pods = client.CoreV1Api(api).list_namespaced_pod(
        namespace, label_selector=",".join(f"{k}={v}" for k, v in _LABELS.items())).items
    counts = Counter(node_zones.get(p.spec.node_name or "", "") for p in pods
                     if workloads.is_ready(p))
    return {zone: counts.get(zone, 0) for zone in sorted(set(node_zones.values()))}
