"""A kubelet that reports its node NotReady itself while it keeps renewing the node's Lease.

Stopping a kubelet (``StopKubelets``) gives Ready=Unknown through the node-lifecycle
controller. A kubelet whose container runtime is down (or whose PLEG is unhealthy) posts
Ready=False itself and keeps renewing its Lease in ``kube-node-lease``; the node-lifecycle
controller then leaves the condition as posted (the node is not silent) and taints the
node ``node.kubernetes.io/not-ready``. ``reporting_not_ready`` produces exactly that on a
backend whose kubelets can be stopped: the node's real kubelet (a kwok process on the local
bed) is stopped so it cannot re-post Ready=True, and this module plays its part: one
status write (Ready=False, reason ``KubeletNotReady``) and a Lease renewal every quarter
of the node-lease duration (the kubelet's own interval), until the context ends and the
real kubelet starts again. Not a registered fault kind (yet): the conformance suite uses
it directly.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, Kubelets

__all__ = ["NODE_LEASE_NAMESPACE", "NOT_READY_REASON", "ready_condition", "reporting_not_ready"]

NODE_LEASE_NAMESPACE = "kube-node-lease"
NOT_READY_REASON = "KubeletNotReady"
_MESSAGE = "container runtime is down (zoneproof: kubelet reports NotReady)"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def ready_condition(core: client.CoreV1Api, node: str) -> tuple[str, str]:
    """(status, reason) of ``node``'s Ready condition as the API server stores it."""
    for condition in core.read_node_status(node).status.conditions or ():
        if condition.type == "Ready":
            return str(condition.status), str(condition.reason or "")
    return "", ""


def _post_not_ready(core: client.CoreV1Api, node: str) -> None:
    now = _now().isoformat()
    body = {"status": {"conditions": [{
        "type": "Ready", "status": "False", "reason": NOT_READY_REASON, "message": _MESSAGE,
        "lastHeartbeatTime": now, "lastTransitionTime": now}]}}
    core.patch_node_status(node, body)  # strategic merge: conditions merge by type


def _renew(coordination: client.CoordinationV1Api, node: str) -> None:
    now = _now()
    coordination.patch_namespaced_lease(node, NODE_LEASE_NAMESPACE, {
        "spec": {"holderIdentity": node, "renewTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}})


@contextmanager
def reporting_not_ready(cluster: Cluster, node: str, *, lease_duration_s: float
                        ) -> Iterator[dt.datetime]:
    """``node`` reports Ready=False while its Lease stays renewed; yields when the status
    was posted (UTC). On exit the renewals stop and the node's kubelet starts again (it
    posts Ready=True)."""
    kubelets: Kubelets = facets.facet(cluster, Capability.STOP_KUBELET)
    api = kube.api_client(cluster.kubeconfig)
    core, coordination = client.CoreV1Api(api), client.CoordinationV1Api(api)
    stop = threading.Event()
    failures: list[BaseException] = []

    def heartbeat() -> None:
        while not stop.wait(lease_duration_s / 4):
            try:
                _renew(coordination, node)
            except client.ApiException as exc:  # noted; the check reads the condition back
                failures.append(exc)

    kubelets.stop_kubelet(node)
    thread = threading.Thread(target=heartbeat, name=f"node-lease-{node}", daemon=True)
    try:
        _renew(coordination, node)
        thread.start()
        _post_not_ready(core, node)
        yield _now()
        if failures:
            raise errors.FaultError(f"renewing {node}'s Lease failed: {failures[-1]}")
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(timeout=5)
        kubelets.start_kubelet(node)
        api.close()
