"""Many pod creates or force deletes at once: the bench's load and the API server's limit.

Responses are not decoded into client models (``_preload_content=False``): decoding a
pod costs the bench more CPU than the API server spends on it, and on a 2-core machine
that CPU is taken from the server being measured. The client's connection pool is sized
to the threads, so urllib3 never drops connections ("Connection pool is full").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof._util import kube

__all__ = ["THREADS", "BarePod", "Client", "create_pods", "force_delete"]

THREADS = 32


@dataclass(frozen=True, slots=True)
class BarePod:
    """A pod bound to ``node`` (no scheduler involved)."""

    namespace: str
    name: str
    node: str
    labels: tuple[tuple[str, str], ...] = ()

    def body(self) -> dict[str, Any]:
        """The pod to create."""
        return {"metadata": {"name": self.name, "labels": dict(self.labels)},
                "spec": {"nodeName": self.node, "containers": [{"name": "c", "image": "fake"}]}}


class Client:
    """CoreV1Api for ``threads`` concurrent requests (pool sized to match)."""

    def __init__(self, kubeconfig: Path, threads: int = THREADS) -> None:
        self.threads = threads
        self.api = kube.api_client(kubeconfig, pool_maxsize=threads + 4)
        self.core = client.CoreV1Api(self.api)

    def close(self) -> None:
        """Close the connections."""
        self.api.close()


def _read(response: Any) -> bytes:
    try:
        data: bytes = response.read()
        return data
    finally:
        response.release_conn()


def _timed(threads: int, items: Sequence[BarePod], call: Callable[[BarePod], None]) -> float:
    """Run ``call`` on every item with ``threads`` threads; wall seconds (errors re-raised)."""
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for _ in pool.map(call, items):
            pass
    return time.monotonic() - start


def create_pods(c: Client, pods: Sequence[BarePod]) -> tuple[float, dict[BarePod, str]]:
    """Create ``pods`` in parallel; wall seconds and each pod's uid."""
    uids: dict[BarePod, str] = {}

    def create(pod: BarePod) -> None:
        created = _read(c.core.create_namespaced_pod(pod.namespace, pod.body(),
                                                     _preload_content=False))
        uids[pod] = str(json.loads(created)["metadata"]["uid"])

    return _timed(c.threads, pods, create), uids


def force_delete(c: Client, uids: dict[BarePod, str]) -> float:
    """Force-delete every pod (grace 0, uid precondition: the controller's request), all
    in parallel; wall seconds from the first request to the last answer."""
    def delete(pod: BarePod) -> None:
        body = client.V1DeleteOptions(grace_period_seconds=0,
                                      preconditions=client.V1Preconditions(uid=uids[pod]))
        _read(c.core.delete_namespaced_pod(pod.name, pod.namespace, grace_period_seconds=0,
                                           body=body, _preload_content=False))

    return _timed(c.threads, list(uids), delete)
