"""A restarted fake kubelet reports its running pods Ready again, as a kubelet's status sync does.

kwok v0.8 acts on a pod only while its Lease cache shows the pod's Node's Lease as its own
(kubernetes-sigs/kwok#1464). A restarted kwok has a new identity: it takes the Lease and lists
the Node's pods at once; when its watch of Leases delivers the take after that list, it drops
the pods as not its own, and nothing writes them again. A pod kube-controller-manager marked
unready during the outage then stays unready for good (seen once in CI on a loaded machine).
A real kubelet's status manager re-syncs every pod's status, so after a restart zoneproof
finishes what kwok's own pass dropped: once the new kwok holds a Node's Lease and the Node is
Ready, a Running pod still not Ready after ``SETTLE_S`` gets the status the
``zoneproof-pod-ready-again`` stage (kwok_stages/) writes.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from typing import Any

from kubernetes import client

from zoneproof._util import kube
from zoneproof.cluster._common import node_ready

__all__ = ["SETTLE_S", "holders", "ready_again_patch", "start", "stuck_unready"]

log = logging.getLogger(__name__)

SETTLE_S = 2.0
_POLL_S = 0.5
_REQUEST_TIMEOUT_S = 5.0
_LEASE_NAMESPACE = "kube-node-lease"


def holders(api: client.ApiClient, nodes: list[str]) -> dict[str, str] | None:
    """Node → holder of its Lease now ('' if free or absent); None if the API server does not
    answer (then no resync is watched)."""
    try:
        return {node: _holder(api, node) for node in nodes}
    except Exception as exc:
        log.debug("no pod resync for %s: %s", nodes, exc)
        return None


def _holder(api: client.ApiClient, node: str) -> str:
    return kube.lease_holder(api, _LEASE_NAMESPACE, node, timeout_s=_REQUEST_TIMEOUT_S)


def stuck_unready(pods: list[Any]) -> list[Any]:
    """The pods a kubelet reports Ready: Running, not being deleted, Ready not True (the
    condition ``node_ready`` reads, a pod's like a node's)."""
    return [p for p in pods if p.status.phase == "Running"
            and p.metadata.deletion_timestamp is None and not node_ready(p)]


def ready_again_patch(pod: Any, now: datetime.datetime) -> dict[str, Any]:
    """The status patch of the pod-ready-again stage: Ready, ContainersReady and every
    readiness gate True."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    kinds = ["Ready", "ContainersReady",
             *(gate.condition_type for gate in pod.spec.readiness_gates or [])]
    return {"status": {"conditions": [
        {"type": kind, "status": "True", "lastTransitionTime": stamp} for kind in kinds]}}


def start(api: client.ApiClient, before: dict[str, str] | None, timeout_s: float
          ) -> threading.Thread | None:
    """Watch over the Nodes of ``before`` (node → Lease holder before the restart, from
    ``holders``) for ``timeout_s`` in a daemon thread."""
    if not before:
        return None
    thread = threading.Thread(target=_run, args=(api, before, timeout_s), daemon=True,
                              name=f"pod-resync-{'-'.join(sorted(before))}"[:60])
    thread.start()
    return thread


def _run(api: client.ApiClient, before: dict[str, str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    core = client.CoreV1Api(api)
    taken: dict[str, float] = {}  # node → when its new kwok was first seen holding the Lease
    pending = set(before)
    while pending and time.monotonic() < deadline:
        for node in sorted(pending):
            try:
                if node not in taken:
                    if _holder(api, node) not in ("", before[node]):
                        taken[node] = time.monotonic()
                elif time.monotonic() - taken[node] >= SETTLE_S and _resynced(core, node):
                    pending.discard(node)
            except Exception as exc:  # an API server restarting, or the bed going down
                log.debug("pod resync of %s: %s", node, exc)
        time.sleep(_POLL_S)


def _resynced(core: client.CoreV1Api, node: str) -> bool:
    """Report the Node's stuck pods Ready if the Node is Ready; True once none is left."""
    if not node_ready(core.read_node(node, _request_timeout=_REQUEST_TIMEOUT_S)):
        return False
    pods = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}",
                                            _request_timeout=_REQUEST_TIMEOUT_S).items
    for pod in stuck_unready(pods):
        log.info("kwok of %s left pod %s/%s unready after its restart (kwok#1464): "
                 "reporting it Ready", node, pod.metadata.namespace, pod.metadata.name)
        core.patch_namespaced_pod_status(pod.metadata.name, pod.metadata.namespace,
                                         ready_again_patch(pod, datetime.datetime.now(
                                             datetime.UTC)), _request_timeout=_REQUEST_TIMEOUT_S)
    return True
