"""A client-side informer cache of one namespace's ConfigMaps, as controllers read them.

List, then watch from the list's resourceVersion; re-watch at once when a watch chunk ends.
When the watch breaks (API server gone, stream cut) it backs off like client-go's reflector
(0.8 s doubling to 30 s, each wait stretched by up to 100 % jitter, reset after 2 min
without a failure) before it watches again (re-listing on 410 Gone). Meanwhile the cache
keeps answering with what it had: reads from it are stale while writes already succeed.
That is the staleness ``ReadMode.INFORMER`` exists to show.

Events: ``informer_synced`` {rv} after each (re)list, ``informer_disconnected`` {error,
backoff_s} per failure, ``informer_watching`` {rv} when a watch is open again after one.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Any

import urllib3
from kubernetes import client, watch

from zoneproof import errors
from zoneproof.measure.timeline import Timeline

__all__ = ["BACKOFF_INITIAL_S", "BACKOFF_MAX_S", "BACKOFF_RESET_S", "ConfigMapInformer"]

log = logging.getLogger(__name__)

BACKOFF_INITIAL_S = 0.8
BACKOFF_MAX_S = 30.0
BACKOFF_RESET_S = 120.0
_WATCH_CHUNK_S = 5
_REQUEST_TIMEOUT_S = 10.0
_ERRORS = (client.ApiException, urllib3.exceptions.HTTPError, OSError)


class ConfigMapInformer:
    """The ConfigMaps of ``namespace`` as last seen by a list+watch: name → (value of
    ``data_key``, resourceVersion)."""

    def __init__(self, api: client.ApiClient, namespace: str, timeline: Timeline, *,
                 data_key: str, rng: random.Random) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace, self.timeline, self.data_key, self.rng = namespace, timeline, data_key, rng
        self._cache: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="ConfigMapInformer")
        self._backoff_s = BACKOFF_INITIAL_S
        self._last_failure = float("-inf")

    def start(self, timeout_s: float = 30.0) -> ConfigMapInformer:
        """Start list+watch; returns once the first list is in the cache."""
        self._thread.start()
        if not self._synced.wait(timeout_s):
            self.stop()
            raise errors.BackendError(
                f"informer of {self.namespace}: the first list did not finish in {timeout_s:g} s: "
                "check that the API server answers (zoneproof status)")
        return self

    def stop(self) -> None:
        """Stop watching and wait for the thread."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(_WATCH_CHUNK_S + _REQUEST_TIMEOUT_S)

    def get(self, name: str) -> tuple[str, str] | None:
        """(value, resourceVersion) of ConfigMap ``name`` as cached, or None if absent."""
        with self._lock:
            return self._cache.get(name)

    def _entry(self, obj: Any) -> tuple[str, str]:
        return (obj.data or {}).get(self.data_key, ""), str(obj.metadata.resource_version)

    def _list(self) -> str:
        listed = self.core.list_namespaced_config_map(self.namespace,
                                                      _request_timeout=_REQUEST_TIMEOUT_S)
        with self._lock:
            self._cache = {o.metadata.name: self._entry(o) for o in listed.items}
        rv = str(listed.metadata.resource_version)
        self.timeline.add("informer_synced", self.namespace, rv=rv)
        self._synced.set()
        return rv

    def _apply(self, event: dict[str, Any]) -> str:
        if event["type"] == "BOOKMARK":  # its object is left undecoded
            return str(event["raw_object"]["metadata"]["resourceVersion"])
        obj = event["object"]
        with self._lock:
            if event["type"] == "DELETED":
                self._cache.pop(obj.metadata.name, None)
            else:
                self._cache[obj.metadata.name] = self._entry(obj)
        return str(obj.metadata.resource_version)

    def _watch(self, rv: str, after_failure: bool) -> str:
        stream = watch.Watch().stream(
            self.core.list_namespaced_config_map, self.namespace, resource_version=rv,
            timeout_seconds=_WATCH_CHUNK_S, allow_watch_bookmarks=True,
            _request_timeout=_REQUEST_TIMEOUT_S + _WATCH_CHUNK_S)
        for index, event in enumerate(stream):
            if index == 0 and after_failure:
                self.timeline.add("informer_watching", self.namespace, rv=rv)
            if self._stop.is_set():
                break
            rv = self._apply(event)
        return rv

    def _back_off(self, exc: BaseException) -> None:
        now = time.monotonic()
        if now - self._last_failure > BACKOFF_RESET_S:
            self._backoff_s = BACKOFF_INITIAL_S
        self._last_failure = now
        wait_s = self._backoff_s * (1.0 + self.rng.random())
        self._backoff_s = min(self._backoff_s * 2, BACKOFF_MAX_S)
        self.timeline.add("informer_disconnected", self.namespace, error=type(exc).__name__,
                          backoff_s=f"{wait_s:.2f}")
        log.debug("informer of %s: %s; backing off %.2f s", self.namespace, exc, wait_s)
        self._stop.wait(wait_s)

    def _run(self) -> None:
        rv: str | None = None
        failed = False
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._list()
                rv = self._watch(rv, failed)
                failed = False
            except client.ApiException as exc:
                if exc.status == 410:
                    rv = None  # too old: re-list
                    continue
                failed = True
                self._back_off(exc)
            except _ERRORS as exc:
                failed = True
                self._back_off(exc)
