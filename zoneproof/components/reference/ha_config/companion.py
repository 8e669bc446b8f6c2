"""The companion node controller (spec §11): re-trigger mutation when the Node count crosses 1.

Pure parts: ``MultiNodeTracker`` (act on the first observation, then only when "more than
one Node" flips) and ``needs_retrigger`` (does the first hostname constraint disagree with
the current state?). ``Companion`` does the API work in one worker thread: list
``consider=true`` namespaces, their Deployments/StatefulSets without ``skip``, and send an
empty merge patch (an UPDATE, so the webhook recomputes) to each one that disagrees.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from kubernetes import client

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_config.informers import TRANSIENT_ERRORS
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config.payloads import JsonValue

__all__ = ["Companion", "MultiNodeTracker", "hostname_policies", "needs_retrigger"]

log = logging.getLogger(__name__)

#: Answers to a re-trigger patch that concern that object alone (bad request, denied by the
#: webhook, gone, invalid once recomputed): the object is skipped, not the whole reconcile
#: retried (any other error is, after ``retry_s``).
_REFUSED = frozenset({400, 403, 404, 422})


class MultiNodeTracker:
    """Decides when to reconcile: the first observation, then each flip of ``count > 1``.

    ``at_start=False`` (a broken variant) skips the first observation.
    """

    def __init__(self, *, at_start: bool = True) -> None:
        self._last: bool | None = None
        self._at_start = at_start
        self._lock = threading.Lock()

    def observe(self, node_count: int) -> bool:
        """Record ``node_count``; True when a reconcile is due."""
        multi = node_count > 1
        with self._lock:
            due = (self._last is None and self._at_start) or (
                self._last is not None and self._last != multi)
            self._last = multi
        return due


def needs_retrigger(policies: Iterable[tuple[str | None, str | None]], multi_node: bool) -> bool:
    """True if the first hostname constraint is ScheduleAnyway on several Nodes or DoNotSchedule on one.

    ``policies`` are (topologyKey, whenUnsatisfiable) pairs in the pod template's order.
    """
    for topology_key, when in policies:
        if topology_key == keys.TOPOLOGY_HOSTNAME:
            return when == ("ScheduleAnyway" if multi_node else "DoNotSchedule")
    return False


def hostname_policies(constraints: Sequence[JsonValue]) -> list[tuple[str | None, str | None]]:
    """(topologyKey, whenUnsatisfiable) of raw JSON constraints."""
    pairs: list[tuple[str | None, str | None]] = []
    for constraint in constraints:
        if isinstance(constraint, dict):
            key, when = constraint.get("topologyKey"), constraint.get("whenUnsatisfiable")
            pairs.append((key if isinstance(key, str) else None, when if isinstance(when, str) else None))
    return pairs


def _model_policies(obj: Any) -> list[tuple[str | None, str | None]]:
    spec = obj.spec.template.spec if obj.spec and obj.spec.template else None
    return [(c.topology_key, c.when_unsatisfiable) for c in (spec.topology_spread_constraints or ())] \
        if spec else []


class Companion:
    """The §11 controller; feed ``observe_node_count`` from the Node cache, ``run`` in a thread."""

    def __init__(self, api: client.ApiClient, *, request_timeout_s: float = 30.0,
                 retry_s: float = 5.0, at_start: bool = True) -> None:
        self._core = client.CoreV1Api(api)
        self._apps = client.AppsV1Api(api)
        self._tracker = MultiNodeTracker(at_start=at_start)
        self._queue: queue.Queue[bool | None] = queue.Queue()
        self._timeout_s = request_timeout_s
        self._retry_s = retry_s
        self.patched = 0

    def observe_node_count(self, node_count: int) -> None:
        """Queue a reconcile when the tracker says one is due."""
        if self._tracker.observe(node_count):
            self._queue.put(node_count > 1)

    def stop(self) -> None:
        """End ``run`` after the current reconcile."""
        self._queue.put(None)

    def run(self) -> None:
        """Reconcile for each queued state until stopped; a failed reconcile is queued again later."""
        while (multi_node := self._queue.get()) is not None:
            try:
                self.reconcile(multi_node)
            except TRANSIENT_ERRORS as exc:
                jsonlog.emit(log, logging.WARNING, "companion-reconcile-failed", multi_node=multi_node,
                             error=f"{type(exc).__name__}: {exc}")
                retry = threading.Timer(self._retry_s, self._queue.put, args=(multi_node,))
                retry.daemon = True
                retry.start()

    def reconcile(self, multi_node: bool) -> None:
        """Patch ``{}`` onto every selected workload whose hostname constraint disagrees."""
        selector = f"{keys.LABEL_CONSIDER}=true"
        namespaces = self._core.list_namespace(label_selector=selector, _request_timeout=self._timeout_s)
        for namespace in namespaces.items or ():
            name = namespace.metadata.name
            for kind, lister, patcher in (
                    ("Deployment", self._apps.list_namespaced_deployment,
                     self._apps.patch_namespaced_deployment),
                    ("StatefulSet", self._apps.list_namespaced_stateful_set,
                     self._apps.patch_namespaced_stateful_set)):
                objects = lister(name, label_selector=f"!{keys.LABEL_SKIP}", _request_timeout=self._timeout_s)
                for obj in objects.items or ():
                    if needs_retrigger(_model_policies(obj), multi_node):
                        try:
                            patcher(obj.metadata.name, name, {}, _content_type="application/merge-patch+json",
                                    _request_timeout=self._timeout_s)
                        except client.ApiException as exc:
                            if exc.status not in _REFUSED:
                                raise
                            # the API server refuses this one object (the webhook denies it, or
                            # its recomputed form is invalid, or it is gone): patching it again
                            # changes nothing, and it must not hold back the others
                            jsonlog.emit(log, logging.WARNING, "companion-patch-refused", kind=kind,
                                         namespace=name, name=obj.metadata.name, status=exc.status,
                                         reason=exc.reason)
                            continue
                        self.patched += 1
                        jsonlog.emit(log, logging.INFO, "companion-retriggered", kind=kind, namespace=name,
                                     name=obj.metadata.name, multi_node=multi_node)
