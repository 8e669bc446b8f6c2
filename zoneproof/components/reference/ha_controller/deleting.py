"""One force delete, fenced: asked of the Gate immediately before the request, every time.

``Deleter.delete`` runs in the pool's worker threads: it waits for the rate limiter
first and only then asks whether this process is still the leader, so no delete goes
out on leadership that lapsed while it queued. Every outcome is counted and logged with
the acting identity and its fencing token (leaseTransitions); a ``pod-delete`` line also
says when the request went out and how long it took (where reaction time goes).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_controller import leader, ratelimit
from zoneproof.components.reference.ha_controller.transitions import PodRef

__all__ = ["FAILED", "GONE", "SKIPPED", "Counters", "Deleter", "Emitter", "PodDeleteApi"]

FAILED = "failed"
SKIPPED = "skipped"
GONE = frozenset({"deleted", "not-found", "replaced"})
"""Outcomes after which the pod (that uid) no longer exists."""

log = logging.getLogger("zoneproof.components.reference.ha_controller.controller")


class PodDeleteApi(Protocol):
    """The CoreV1Api call that deletes a pod."""

    def delete_namespaced_pod(self, name: str, namespace: str, **kwargs: Any) -> Any:
        """DELETE one pod."""


class Emitter:
    """Log lines of the controller: each names the acting identity, fencing token, variant."""

    def __init__(self, gate: leader.Gate, identity: str, variant: str) -> None:
        self._gate, self._identity, self._variant = gate, identity, variant

    def __call__(self, level: int, event: str, lead: leader.Leadership | None = None,
                 /, **fields: object) -> None:
        """Emit ``event``; ``lead`` is the leadership acted under (default: the Gate's now)."""
        if lead is None:
            lead = self._gate.current()
        jsonlog.emit(
            log, level, event,
            identity=lead.identity if lead else self._identity,
            lease_transitions=lead.lease_transitions if lead else None,
            leader=lead is not None, variant=self._variant, **fields)


@dataclass
class Counters:
    """What the deletes did, for tests and the shutdown log line (thread-safe via ``note``)."""

    deleted: int = 0
    skipped_not_leader: int = 0
    failed: int = 0
    by_result: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def note(self, result: str) -> None:
        """Count one outcome: deleted, not-found, replaced, failed or skipped-not-leader."""
        with self._lock:
            if result == "deleted":
                self.deleted += 1
            elif result == "failed":
                self.failed += 1
            elif result == "skipped-not-leader":
                self.skipped_not_leader += 1
            if result not in ("failed", "skipped-not-leader"):
                self.by_result[result] = self.by_result.get(result, 0) + 1


class Deleter:
    """Force-deletes pods (uid precondition, grace 0 unless the variant says otherwise)."""

    def __init__(self, core: PodDeleteApi, gate: leader.Gate, emit: Emitter, *,
                 grace_period_seconds: int | None, request_timeout_s: float,
                 limiter: ratelimit.TokenBucket | None = None) -> None:
        self._core, self._gate, self._emit = core, gate, emit
        self._grace = grace_period_seconds
        self._timeout_s = request_timeout_s
        self._limiter = limiter
        self.closed = False
        self.counters = Counters()

    def delete(self, pod: PodRef, *, node: str, cause: str) -> str:
        """Force-delete ``pod`` if still leader. The outcome: ``deleted``, ``not-found``,
        ``replaced`` (a new pod owns the name), ``skipped`` (not leader, or stopping) or
        ``failed`` (the only one to retry)."""
        if self._limiter is not None:
            self._limiter.acquire()
        if self.closed:
            return SKIPPED
        lead = self._gate.current()
        if lead is None:
            self.counters.note("skipped-not-leader")
            self._emit(logging.INFO, "pod-delete-skipped", node=node, namespace=pod.namespace,
                       pod=pod.name, cause=cause, why="not-leader")
            return SKIPPED
        kwargs: dict[str, Any] = {"_request_timeout": self._timeout_s, "_preload_content": False}
        if self._grace is not None:
            kwargs["grace_period_seconds"] = self._grace
        body = client.V1DeleteOptions(
            grace_period_seconds=self._grace,
            preconditions=client.V1Preconditions(uid=pod.uid) if pod.uid else None)
        sent, started = datetime.now(UTC), time.monotonic()
        try:
            _discard(self._core.delete_namespaced_pod(pod.name, pod.namespace, body=body, **kwargs))
            result = "deleted"
        except ApiException as exc:
            if exc.status == 404:
                result = "not-found"
            elif exc.status == 409:
                result = "replaced"  # uid precondition: a new pod owns the name
            else:
                return self._failed(pod, node, cause, lead, exc)
        except leader.TRANSIENT_ERRORS as exc:
            return self._failed(pod, node, cause, lead, exc)
        self.counters.note(result)
        self._emit(logging.INFO, "pod-delete", lead, node=node, namespace=pod.namespace,
                   pod=pod.name, uid=pod.uid, result=result, cause=cause,
                   grace_period_seconds=self._grace,
                   sent=sent.isoformat(timespec="milliseconds"),
                   seconds=round(time.monotonic() - started, 3))
        return result

    def _failed(self, pod: PodRef, node: str, cause: str, lead: leader.Leadership,
                exc: BaseException) -> str:
        self.counters.note(FAILED)
        self._emit(logging.ERROR, "pod-delete-failed", lead, node=node, namespace=pod.namespace,
                   pod=pod.name, uid=pod.uid, cause=cause, error=str(exc).strip())
        return FAILED


def _discard(response: Any) -> None:
    """Read and release a ``_preload_content=False`` response (the pod is not decoded)."""
    if response is None:
        return
    try:
        response.read()
    finally:
        response.release_conn()
