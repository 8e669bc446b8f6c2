"""Watch caches of Nodes, Namespaces and HPAs: list, then watch; re-list on 410 Gone or errors.

``ClusterCache`` answers the handler's reads (``facts.ClusterFacts``) from memory, so no
request waits on the API server. Each ``Informer`` runs in its own thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar

import urllib3
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from zoneproof._util import jsonlog
from zoneproof.specs.ha_config import facts

__all__ = ["TRANSIENT_ERRORS", "ClusterCache", "Informer", "WatchLike"]

log = logging.getLogger(__name__)

T = TypeVar("T")
HTTP_GONE = 410
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (ApiException, urllib3.exceptions.HTTPError, OSError)


class WatchLike(Protocol):
    """The part of ``kubernetes.watch.Watch`` used here."""

    def stream(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        """Yield watch events ``{"type", "object", "raw_object"}``."""

    def stop(self) -> None:
        """End the stream (from another thread)."""


class Informer(Generic[T]):
    """A keyed in-memory copy of one resource list, kept current by a watch."""

    def __init__(self, name: str, list_func: Callable[..., Any], convert: Callable[[Any], tuple[str, T]], *,
                 on_change: Callable[[int], None] | None = None,
                 watch_factory: Callable[[], WatchLike] = watch.Watch,
                 timeout_s: int = 300, backoff_s: float = 1.0, connect_timeout_s: float = 10.0,
                 forget_deleted: bool = True) -> None:
        self.name = name
        self._forget_deleted = forget_deleted
        self._list = list_func
        self._convert = convert
        self._on_change = on_change
        self._watch_factory = watch_factory
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._connect_timeout_s = connect_timeout_s
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._current: WatchLike | None = None
        self.synced = threading.Event()
        self.relists = 0

    def values(self) -> list[T]:
        """A snapshot of the cached items, in insertion order."""
        with self._lock:
            return list(self._items.values())

    def get(self, key: str) -> T | None:
        """One cached item."""
        with self._lock:
            return self._items.get(key)

    def stop(self) -> None:
        """End ``run`` soon; interrupts a blocked watch."""
        self._stopping.set()
        if self._current is not None:
            self._current.stop()

    def run(self) -> None:
        """Until stopped: list, watch from that resourceVersion, repeat on expiry or error."""
        version: str | None = None
        while not self._stopping.is_set():
            try:
                if version is None:
                    version = self._relist()
                version = self._watch_from(version)
            except ApiException as exc:
                jsonlog.emit(log, logging.INFO, "watch-broken", cache=self.name,
                             error=f"HTTP {exc.status} {exc.reason}")
                version = None
                if exc.status != HTTP_GONE:
                    self._stopping.wait(self._backoff_s)
            except TRANSIENT_ERRORS as exc:
                jsonlog.emit(log, logging.WARNING, "cache-sync-failed", cache=self.name,
                             error=f"{type(exc).__name__}: {exc}")
                version = None
                self._stopping.wait(self._backoff_s)

    def _relist(self) -> str:
        listed = self._list(timeout_seconds=self._timeout_s,
                            _request_timeout=(self._connect_timeout_s, self._timeout_s + 30))
        items = dict(self._convert(item) for item in listed.items or ())
        with self._lock:
            self._items = items
        self.relists += 1
        self.synced.set()
        jsonlog.emit(log, logging.INFO, "cache-listed", cache=self.name, items=len(items))
        self._changed()
        return str(listed.metadata.resource_version or "")

    def _watch_from(self, version: str) -> str:
        current = self._watch_factory()
        self._current = current
        if self._stopping.is_set():
            return version
        for event in current.stream(self._list, resource_version=version, allow_watch_bookmarks=True,
                                    timeout_seconds=self._timeout_s,
                                    _request_timeout=(self._connect_timeout_s, self._timeout_s + 30)):
            if self._stopping.is_set():
                break
            kind = event["type"]
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                key, value = self._convert(event["object"])
                with self._lock:
                    if kind == "DELETED":
                        if self._forget_deleted:
                            self._items.pop(key, None)
                    else:
                        self._items[key] = value
                self._changed()
            raw = event.get("raw_object") or {}
            version = str(raw.get("metadata", {}).get("resourceVersion") or version)
        return version

    def _changed(self) -> None:
        if self._on_change is not None:
            with self._lock:
                count = len(self._items)
            self._on_change(count)


def _node(node: Any) -> tuple[str, None]:
    return str(node.metadata.name), None


def _namespace(namespace: Any) -> tuple[str, facts.NamespaceInfo]:
    meta = namespace.metadata
    return str(meta.name), facts.NamespaceInfo(str(meta.name), dict(meta.labels or {}),
                                               dict(meta.annotations or {}))


def _hpa(hpa: Any) -> tuple[str, tuple[str, facts.HpaInfo]]:
    meta, spec = hpa.metadata, hpa.spec
    ref = spec.scale_target_ref
    info = facts.HpaInfo(str(meta.name), str(ref.api_version or ""), str(ref.kind or ""),
                         str(ref.name or ""), int(spec.max_replicas or 0))
    return f"{meta.namespace}/{meta.name}", (str(meta.namespace), info)


class ClusterCache:
    """``facts.ClusterFacts`` from three informers; reads fail with FactsError until synced."""

    def __init__(self, api: client.ApiClient, *, on_node_count: Callable[[int], None] | None = None,
                 watch_factory: Callable[[], WatchLike] = watch.Watch,
                 hpa_forget_deleted: bool = True) -> None:
        core, autoscaling = client.CoreV1Api(api), client.AutoscalingV2Api(api)
        self.nodes: Informer[None] = Informer("nodes", core.list_node, _node, on_change=on_node_count,
                                              watch_factory=watch_factory)
        self.namespaces: Informer[facts.NamespaceInfo] = Informer(
            "namespaces", core.list_namespace, _namespace, watch_factory=watch_factory)
        self.hpa_cache: Informer[tuple[str, facts.HpaInfo]] = Informer(
            "horizontalpodautoscalers", autoscaling.list_horizontal_pod_autoscaler_for_all_namespaces, _hpa,
            watch_factory=watch_factory, forget_deleted=hpa_forget_deleted)
        self._informers: tuple[Informer[Any], ...] = (self.nodes, self.namespaces, self.hpa_cache)
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start one daemon thread per informer."""
        for informer in self._informers:
            thread = threading.Thread(target=informer.run, name=f"informer-{informer.name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Stop the informers and wait briefly for their threads."""
        for informer in self._informers:
            informer.stop()
        for thread in self._threads:
            thread.join(timeout=5)

    def synced(self) -> bool:
        """True once every informer has listed once."""
        return all(informer.synced.is_set() for informer in self._informers)

    def _require(self, informer: Informer[Any]) -> None:
        if not informer.synced.is_set():
            raise facts.FactsError(f"the {informer.name} cache has not synced yet")

    def namespace(self, name: str) -> facts.NamespaceInfo:
        """The cached Namespace."""
        self._require(self.namespaces)
        found = self.namespaces.get(name)
        if found is None:
            raise facts.FactsError(f'namespaces "{name}" not found')
        return found

    def hpas(self, namespace: str) -> Sequence[facts.HpaInfo]:
        """The cached HPAs of ``namespace``."""
        self._require(self.hpa_cache)
        return tuple(info for ns, info in self.hpa_cache.values() if ns == namespace)

    def node_count(self) -> int:
        """The cached Node count."""
        self._require(self.nodes)
        return len(self.nodes.values())
