"""List, then watch Nodes from that resourceVersion; re-list (and so reconcile) on 410
Gone or a dropped connection. Feeds a Controller; does no API writes itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_controller import controller, leader, transitions

__all__ = ["NodeWatcher", "WatchLike"]

log = logging.getLogger(__name__)

HTTP_GONE = 410


class WatchLike(Protocol):
    """The part of ``kubernetes.watch.Watch`` used here."""

    def stream(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        """Yield watch events ``{"type", "object", "raw_object"}``."""

    def stop(self) -> None:
        """End the stream (from another thread)."""


class NodeWatcher:
    """The list-then-watch loop over Nodes; ``run`` in a thread, ``stop`` from another."""

    def __init__(
        self,
        core: controller.CoreApi,
        sink: controller.Controller,
        *,
        watch_factory: Callable[[], WatchLike] | None = None,
        timeout_s: int = 300,
        backoff_s: float = 1.0,
        connect_timeout_s: float = 10.0,
    ) -> None:
        self._core = core
        self._sink = sink
        self._watch_factory: Callable[[], WatchLike] = watch_factory or watch.Watch
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._connect_timeout_s = connect_timeout_s
        self._stopping = threading.Event()
        self._current: WatchLike | None = None
        self.relists = 0

    def stop(self) -> None:
        """End ``run`` soon; interrupts a blocked stream."""
        self._stopping.set()
        current = self._current
        if current is not None:
            current.stop()

    def run(self) -> None:
        """Until stopped: list (→ reconcile), watch from that resourceVersion, repeat."""
        reason = "start"
        version: str | None = None
        while not self._stopping.is_set():
            if version is None:
                try:
                    version = self._relist(reason)
                except leader.TRANSIENT_ERRORS as exc:
                    self._note("node-list-failed", reason=reason, error=str(exc).strip())
                    self._stopping.wait(self._backoff_s)
                    continue
            try:
                version = self._watch_from(version)
            except ApiException as exc:
                gone = exc.status == HTTP_GONE
                reason = "watch-expired" if gone else "watch-error"
                self._note("watch-broken", reason=reason, error=f"HTTP {exc.status} {exc.reason}")
                version = None
                if not gone:
                    self._stopping.wait(self._backoff_s)
            except leader.TRANSIENT_ERRORS as exc:
                reason = "watch-dropped"
                self._note("watch-broken", reason=reason, error=f"{type(exc).__name__}: {exc}")
                version = None
                self._stopping.wait(self._backoff_s)

    def _relist(self, reason: str) -> str:
        nodes = self._core.list_node(_request_timeout=(self._connect_timeout_s, self._timeout_s))
        self.relists += 1
        version = transitions.resource_version(nodes) or ""
        self._note("nodes-listed", reason=reason, resource_version=version,
                   nodes=len(nodes.items or ()))
        self._sink.observe_list(nodes.items or (), reason)
        return version

    def _watch_from(self, version: str) -> str:
        """Stream events until the server ends the watch; the last resourceVersion seen."""
        current = self._watch_factory()
        self._current = current
        if self._stopping.is_set():
            return version
        stream = current.stream(
            self._core.list_node, resource_version=version, allow_watch_bookmarks=True,
            timeout_seconds=self._timeout_s,
            _request_timeout=(self._connect_timeout_s, self._timeout_s + 30))
        for event in stream:
            if self._stopping.is_set():
                break
            kind = event["type"]
            if kind != "BOOKMARK":
                self._sink.observe_event(kind, event["object"])
            version = transitions.resource_version(event["raw_object"]) or version
        return version

    def _note(self, event: str, **fields: object) -> None:
        jsonlog.emit(log, logging.INFO, event, **fields)
