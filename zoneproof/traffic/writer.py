"""A background writer: numbered ConfigMaps, every answer recorded on the run's Timeline.

Events: ``write_acknowledged`` {seconds} / ``write_failed`` {error, seconds} per write, and on ``stop()``
``write_lost`` for each acknowledged write that cannot be read back, then
``writes_verified`` {acknowledged, lost}. ``slo.metrics`` turns them into figures.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path

import urllib3
from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.cluster.interface import Cluster
from zoneproof.measure import Timeline
from zoneproof.runs import sweep

__all__ = ["Writer"]

log = logging.getLogger(__name__)
_REQUEST_TIMEOUT_S = 2.0
_VERIFY_TIMEOUT_S = 120.0
_ERRORS = (client.ApiException, urllib3.exceptions.HTTPError, OSError)


class Writer:
    """Writes ConfigMap ``w-<n>`` into ``namespace`` every ``interval_s`` until stopped."""

    def __init__(self, cluster: Cluster, timeline: Timeline, *, namespace: str,
                 interval_s: float, kubeconfig: Path | None = None) -> None:
        """Writes through ``cluster``'s kubeconfig, or ``kubeconfig`` (one API server of
        several, say)."""
        self.timeline, self.namespace, self.interval_s = timeline, namespace, interval_s
        self.core = client.CoreV1Api(kube.api_client(kubeconfig or cluster.kubeconfig,
                                                     retries=0))
        self.acknowledged: list[str] = []
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="Writer")
        self._stopped = False

    def start(self) -> Writer:
        """Create the namespace and begin writing."""
        with contextlib.suppress(client.ApiException):
            self.core.create_namespace(sweep.labelled({"metadata": {"name": self.namespace}}))
        self._thread.start()
        return self

    def _write(self, n: int) -> None:
        name = f"w-{n}"
        started = time.monotonic()
        try:
            self.core.create_namespaced_config_map(
                self.namespace, {"metadata": {"name": name}, "data": {"n": str(n)}},
                _request_timeout=_REQUEST_TIMEOUT_S)
        except _ERRORS as exc:
            self.failed += 1
            self.timeline.add("write_failed", name, error=type(exc).__name__,
                              seconds=f"{time.monotonic() - started:.4f}")
            return
        self.acknowledged.append(name)
        self.timeline.add("write_acknowledged", name, seconds=f"{time.monotonic() - started:.4f}")

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            self._write(n)
            n += 1
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        """Stop writing, then read every acknowledged write back (waits for the API)."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        self._thread.join(_REQUEST_TIMEOUT_S * 3)
        stored = waiting.wait_for(
            lambda: (True, {c.metadata.name for c in self.core.list_namespaced_config_map(
                self.namespace, _request_timeout=_REQUEST_TIMEOUT_S * 5).items}),
            what=f"ConfigMaps of {self.namespace} readable", timeout_s=_VERIFY_TIMEOUT_S,
            interval_s=1.0, ignore=_ERRORS)
        lost = [name for name in self.acknowledged if name not in stored]
        for name in lost:
            self.timeline.add("write_lost", name)
        self.timeline.add("writes_verified", self.namespace,
                          acknowledged=str(len(self.acknowledged)), lost=str(len(lost)))
        log.info("writer: %d acknowledged, %d failed, %d lost", len(self.acknowledged),
                 self.failed, len(lost))
        with contextlib.suppress(*_ERRORS):
            self.core.delete_namespace(self.namespace)
