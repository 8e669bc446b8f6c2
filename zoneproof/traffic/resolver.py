"""A workload that resolves names: its pods are Ready only while the cluster DNS answers.

Deployment ``resolver`` in the run's namespace, spread over zones: each pod's readiness
probe looks the API's Service name up through the cluster DNS (``getent hosts``, every
second, one failure turns it not Ready), so the Ready condition the API server records is
the name lookups' fate (``measure.PodReadinessRecorder``). Its image is the cluster's
(``ClusterDns.resolver_image``: on kind the kube-proxy image every node holds, on a user's
cluster the node agent's), pulled only if a node lacks it.
"""

from __future__ import annotations

from kubernetes import client

from zoneproof.traffic import workloads

__all__ = ["LABEL", "NAME", "SELECTOR", "apply", "ready_pods"]

NAME = "resolver"
LABEL = ("zoneproof.dev/resolver", "names")
SELECTOR = "=".join(LABEL)
#: Resolved through the pod's resolv.conf search path, as a workload names a Service.
LOOKUP = "kubernetes.default.svc.cluster.local"


def _deployment(replicas: int, image: str) -> dict[str, object]:
    labels = dict([LABEL])
    probe = {"exec": {"command": ["getent", "hosts", LOOKUP]}, "periodSeconds": 1,
             "timeoutSeconds": 2, "failureThreshold": 1, "successThreshold": 1}
    return {"metadata": {"name": NAME, "labels": labels}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {
            "topologySpreadConstraints": workloads.zone_spread(labels), "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "resolve", "image": image,
                            "imagePullPolicy": "IfNotPresent", "command": ["sleep", "infinity"],
                            "readinessProbe": probe}]}}}}


def apply(api: client.ApiClient, namespace: str, replicas: int, image: str) -> None:
    """Create the resolver Deployment in ``namespace`` (which exists), its pods running
    ``image`` (which has ``getent``)."""
    client.AppsV1Api(api).create_namespaced_deployment(namespace, _deployment(replicas, image))


def ready_pods(core: client.CoreV1Api, namespace: str) -> dict[str, bool]:
    """Each live resolver pod → whether it is Ready (its last lookup answered)."""
    pods = core.list_namespaced_pod(namespace, label_selector=SELECTOR).items
    return {p.metadata.name: workloads.is_ready(p) for p in pods
            if p.metadata.deletion_timestamp is None}
