"""Admission attempts through the webhook under test, each recorded on the run's Timeline.

A *selected* workload is a Deployment in a namespace the webhook selects (labelled
``keys.LABEL_CONSIDER``); with failurePolicy Fail its creates and updates are rejected
while the webhook is down. Every attempt adds ``admission_ok`` or ``admission_failed``
{operation, selected, reason, latency_s}: ``slo.metrics.failed_admissions`` counts failures
outside fault windows, ``slo.metrics.failed_admissions_during`` those inside one.
``AdmissionTraffic`` makes such attempts all along, in the background.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import urllib3
from kubernetes import client

from zoneproof.cluster import interface
from zoneproof.measure import Timeline
from zoneproof.specs.ha_config import keys
from zoneproof.traffic import workloads

__all__ = ["PROBE_DEPLOYMENT", "AdmissionTraffic", "attempt", "prepare"]

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
    started = time.monotonic()
    try:
        if operation == "create":
            apps.create_namespaced_deployment(namespace, _deployment("admission-try"),
                                              dry_run="All", _request_timeout=_TIMEOUT_S)
        else:
            apps.patch_namespaced_deployment(
                PROBE_DEPLOYMENT, namespace,
                {"metadata": {"annotations": {"zoneproof.dev/touched": "yes"}}},
                dry_run="All", _request_timeout=_TIMEOUT_S)
    except (client.ApiException, urllib3.exceptions.HTTPError) as exc:
        reason = (f"{exc.status} {exc.reason}" if isinstance(exc, client.ApiException)
                  else type(exc).__name__)
        timeline.add("admission_failed", f"{namespace}/{operation}", operation=operation,
                     selected=str(selected), reason=reason,
                     latency_s=f"{time.monotonic() - started:.3f}")
        return False
    timeline.add("admission_ok", f"{namespace}/{operation}", operation=operation,
                 selected=str(selected), latency_s=f"{time.monotonic() - started:.3f}")
    return True


class AdmissionTraffic:
    """Creates and updates of a selected Deployment in ``namespace`` (dry run, the webhook
    decides each), one every ``interval_s`` in turn in each of ``streams`` threads at once,
    until stopped; each one ``attempt``s."""

    def __init__(self, api: client.ApiClient, timeline: Timeline, *, namespace: str,
                 interval_s: float, streams: int = 1) -> None:
        self.api, self.timeline = api, timeline
        self.namespace, self.interval_s = namespace, interval_s
        self.admitted = self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True,
                                          name=f"AdmissionTraffic-{i}") for i in range(streams)]

    def start(self) -> AdmissionTraffic:
        """Begin the attempts."""
        for thread in self._threads:
            thread.start()
        return self

    def _run(self, stream: int) -> None:
        n = stream
        while not self._stop.is_set():
            ok = attempt(self.api, self.timeline, namespace=self.namespace, selected=True,
                         operation=("create", "update")[n % 2])
            with self._lock:
                self.admitted, self.failed = self.admitted + ok, self.failed + (not ok)
            n += 1
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        """End the attempts (those under way finish); idempotent."""
        self._stop.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=_TIMEOUT_S + 5)
