"""List, then watch from that resourceVersion; re-list on 410 Gone or a dropped connection.

One ``ListWatch`` per resource and scope (nodes; pods of one namespace or of all), the
informer's reflector: it hands raw JSON objects (dicts, not client models: decoding
10,000 pods into models costs seconds of CPU) to ``on_list`` after every (re-)list and
to ``on_event`` for every watch event. It makes no writes.

A list is read in pages of ``page_size`` (client-go's pager: 500). Besides sparing the
server, that keeps the Lease alive: parsing one 16 MB list of 5,000 pods holds the GIL
for seconds on a loaded machine, long enough for the elector thread to miss its renew
deadline (measured: 5 s, and the Lease lost).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_controller import leader, ratelimit, transitions

__all__ = ["ListWatch", "RawWatch", "WatchLike", "read_json"]

log = logging.getLogger(__name__)

HTTP_GONE = 410


class WatchLike(Protocol):
    """The part of ``kubernetes.watch.Watch`` used here."""

    def stream(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        """Yield watch events ``{"type", "object", "raw_object"}``."""

    def stop(self) -> None:
        """End the stream (from another thread)."""


class RawWatch(watch.Watch):  # type: ignore[misc]  # the client is untyped
    """``kubernetes.watch.Watch`` that leaves objects as parsed JSON (no model decoding).

    (Its ``deserialize=False`` option drops ``raw_object``, which its own handling of
    ERROR events needs; a return type of None keeps that path intact.)
    """

    def get_return_type(self, func: Callable[..., Any]) -> None:
        """No model: events carry dicts."""
        return None


def read_json(response: Any) -> Any:
    """The JSON body of a ``_preload_content=False`` response; the connection goes back."""
    try:
        return json.loads(response.data)
    finally:
        response.release_conn()


class ListWatch:
    """The list-then-watch loop of one resource; ``run`` in a thread, ``stop`` from another.

    ``list_func`` is a client list call (e.g. ``core.list_node`` or a ``functools.partial``
    of ``core.list_namespaced_pod``); ``query`` its filters (e.g. ``label_selector``).
    """

    def __init__(
        self,
        what: str,
        list_func: Callable[..., Any],
        *,
        on_list: Callable[[list[Any], str], None],
        on_event: Callable[[str, Any], None],
        query: dict[str, str] | None = None,
        watch_factory: Callable[[], WatchLike] | None = None,
        limiter: ratelimit.TokenBucket | None = None,
        timeout_s: int = 300,
        backoff_s: float = 1.0,
        connect_timeout_s: float = 10.0,
        page_size: int = 500,
    ) -> None:
        self.what = what
        self._list = list_func
        self._on_list, self._on_event = on_list, on_event
        self._query = dict(query or {})
        self._watch_factory: Callable[[], WatchLike] = watch_factory or RawWatch
        self._limiter = limiter
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._connect_timeout_s = connect_timeout_s
        self._page_size = page_size
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
        """Until stopped: list (→ ``on_list``), watch from that resourceVersion, repeat."""
        reason = "start"
        version: str | None = None
        while not self._stopping.is_set():
            if version is None:
                try:
                    version = self.relist(reason)
                except leader.TRANSIENT_ERRORS as exc:
                    self._note("list-failed", reason=reason, error=str(exc).strip())
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

    def relist(self, reason: str) -> str:
        """One list (every page), handed to ``on_list``; its resourceVersion."""
        items: list[Any] = []
        token: str | None = None
        while True:
            if self._limiter is not None:
                self._limiter.acquire()
            page = read_json(self._list(
                **self._query, limit=self._page_size, _continue=token,
                _preload_content=False,
                _request_timeout=(self._connect_timeout_s, self._timeout_s)))
            items += page.get("items") or []
            token = (page.get("metadata") or {}).get("continue") or None
            if token is None:
                break
        self.relists += 1
        version = transitions.resource_version(page) or ""
        self._note("listed", reason=reason, resource_version=version, items=len(items))
        self._on_list(items, reason)
        return version

    def _watch_from(self, version: str) -> str:
        """Stream events until the server ends the watch; the last resourceVersion seen."""
        current = self._watch_factory()
        self._current = current
        if self._stopping.is_set():
            return version
        if self._limiter is not None:
            self._limiter.acquire()
        stream = current.stream(
            self._list, **self._query, resource_version=version, allow_watch_bookmarks=True,
            timeout_seconds=self._timeout_s,
            _request_timeout=(self._connect_timeout_s, self._timeout_s + 30))
        for event in stream:
            if self._stopping.is_set():
                break
            kind, raw = event["type"], event["raw_object"]
            if kind != "BOOKMARK":
                self._on_event(kind, raw)
            version = transitions.resource_version(raw) or version
        return version

    def _note(self, event: str, **fields: object) -> None:
        jsonlog.emit(log, logging.INFO, event, what=self.what, **fields)
