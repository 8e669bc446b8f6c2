"""In-memory fakes of the Kubernetes APIs the HA controller uses, for tests (cf. kopf.testing).

Not used by the controller itself. The fakes keep the server's rules that matter here:
Lease writes need the current resourceVersion, deletes honour the uid precondition and
answer 404 for a missing pod, pod lists honour the nodeName field and label selectors,
lists answer raw JSON when asked with ``_preload_content=False``. ``synced_cache`` is a
PodCache kept current by the fake itself (a watch with no lag).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from zoneproof.components.reference.ha_controller import leader, podcache, selectors

__all__ = [
    "Delete",
    "FakeClock",
    "FakeCoreApi",
    "FakeGate",
    "FakeLeaseApi",
    "FakeWatch",
    "WatchFactory",
    "event",
    "node",
    "synced_cache",
    "pod",
    "to_model",
    "to_raw",
]

_API = client.ApiClient()


def to_model(raw: dict[str, Any], kind: str) -> Any:
    """A raw dict as the client model the real API would return."""
    return _API.deserialize(json.dumps(raw), kind, "application/json")


def to_raw(model: Any) -> dict[str, Any]:
    """A model as the JSON the real client would send."""
    raw: dict[str, Any] = _API.sanitize_for_serialization(model)
    return raw


def node(name: str, ready: str | None = "True", rv: str = "1",
         taints: tuple[str, ...] = ()) -> dict[str, Any]:
    """A raw Node; ``ready`` None means no Ready condition; ``taints`` as ``key:Effect``."""
    conditions = [{"type": "MemoryPressure", "status": "False"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready})
    return {"metadata": {"name": name, "resourceVersion": rv},
            "spec": {"taints": [dict(zip(("key", "effect"), t.split(":"), strict=True))
                                for t in taints]},
            "status": {"conditions": conditions}}


def pod(namespace: str, name: str, node_name: str, labels: dict[str, str] | None = None,
        uid: str | None = None) -> dict[str, Any]:
    """A raw Pod bound to ``node_name``."""
    return {"metadata": {"namespace": namespace, "name": name, "uid": uid or f"uid-{name}",
                         "labels": labels if labels is not None else {"app": "noobaa"}},
            "spec": {"nodeName": node_name, "containers": [{"name": "main", "image": "noobaa"}]}}


class FakeClock:
    """Monotonic and wall clock that only move when told."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self.base = datetime(2025, 1, 1, tzinfo=UTC)

    def monotonic(self) -> float:
        return self.t

    def now(self) -> datetime:
        return self.base + timedelta(seconds=self.t)

    def advance(self, seconds: float) -> None:
        self.t += seconds


class FakeLeaseApi:
    """Leases stored as JSON with resourceVersion optimistic concurrency, like the server."""

    def __init__(self) -> None:
        self.store: dict[tuple[str, str], dict[str, Any]] = {}
        self.version = 0
        self.fail: BaseException | None = None
        self.calls: list[str] = []
        self.before_replace: Callable[[], None] | None = None

    def _check(self, verb: str) -> None:
        self.calls.append(verb)
        if self.fail is not None:
            raise self.fail

    def _put(self, namespace: str, name: str, body: Any) -> Any:
        self.version += 1
        raw = to_raw(body)
        raw["metadata"]["resourceVersion"] = str(self.version)
        self.store[(namespace, name)] = raw
        return to_model(raw, "V1Lease")

    def read_namespaced_lease(self, name: str, namespace: str, **_: Any) -> Any:
        self._check("read")
        if (namespace, name) not in self.store:
            raise ApiException(status=404, reason="Not Found")
        return to_model(self.store[(namespace, name)], "V1Lease")

    def create_namespaced_lease(self, namespace: str, body: Any, **_: Any) -> Any:
        self._check("create")
        if (namespace, body.metadata.name) in self.store:
            raise ApiException(status=409, reason="AlreadyExists")
        return self._put(namespace, body.metadata.name, body)

    def replace_namespaced_lease(self, name: str, namespace: str, body: Any, **_: Any) -> Any:
        self._check("replace")
        if self.before_replace is not None:
            hook, self.before_replace = self.before_replace, None
            hook()
        stored = self.store.get((namespace, name))
        if stored is None:
            raise ApiException(status=404, reason="Not Found")
        if body.metadata.resource_version != stored["metadata"]["resourceVersion"]:
            raise ApiException(status=409, reason="Conflict")
        return self._put(namespace, name, body)

    def spec(self, name: str = "ha", namespace: str = "zp") -> dict[str, Any]:
        """The stored Lease spec (raw JSON keys)."""
        spec: dict[str, Any] = self.store[(namespace, name)]["spec"]
        return spec


@dataclass
class Delete:
    """One recorded delete call."""

    namespace: str
    name: str
    grace_period_seconds: int | None
    uid_precondition: str | None


class RawResponse:
    """What a ``_preload_content=False`` call returns: the body, unread."""

    def __init__(self, body: Any) -> None:
        self.data = json.dumps(body).encode()
        self.released = False

    def read(self) -> bytes:
        return self.data

    def release_conn(self) -> None:
        self.released = True


@dataclass
class FakeCoreApi:
    """Nodes and pods in memory; list calls honour the field and label selectors.

    ``pod_listeners`` are told of every pod change (``ADDED``/``DELETED``, raw pod), like
    a watch that never lags.
    """

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    pods: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    deletes: list[Delete] = field(default_factory=list)
    list_calls: list[dict[str, Any]] = field(default_factory=list)
    fail_delete: BaseException | None = None
    fail_list: BaseException | None = None
    on_delete: Callable[[Delete], None] | None = None
    version: int = 100
    list_failures: int = 0
    pod_listeners: list[Callable[[str, dict[str, Any]], None]] = field(default_factory=list)

    def add_node(self, name: str, ready: str | None = "True") -> None:
        self.nodes[name] = node(name, ready)

    def add_pod(self, namespace: str, name: str, node_name: str,
                labels: dict[str, str] | None = None) -> None:
        raw = pod(namespace, name, node_name, labels)
        self.pods[(namespace, name)] = raw
        for listener in self.pod_listeners:
            listener("ADDED", raw)

    def list_node(self, **kwargs: Any) -> Any:
        if self.fail_list is not None:
            self.list_failures += 1
            raise self.fail_list
        if kwargs.get("_preload_content") is False:
            return RawResponse(self._page(list(self.nodes.values()), kwargs))
        items = [to_model(n, "V1Node") for n in self.nodes.values()]
        return SimpleNamespace(items=items, metadata=SimpleNamespace(
            resource_version=str(self.version)))

    def _pods(self, namespace: str | None, kwargs: dict[str, Any]) -> Any:
        self.list_calls.append({"namespace": namespace, **kwargs})
        if self.fail_list is not None:
            raise self.fail_list
        field_selector = kwargs.get("field_selector", "")
        node_name = field_selector.removeprefix("spec.nodeName=") if field_selector else None
        sel = selectors.parse_selector(kwargs.get("label_selector", ""))
        raw = [p for (ns, _), p in sorted(self.pods.items())
               if (namespace is None or ns == namespace)
               and (node_name is None or p["spec"]["nodeName"] == node_name)
               and sel.matches(p["metadata"]["labels"])]
        if kwargs.get("_preload_content") is False:
            return RawResponse(self._page(raw, kwargs))
        return SimpleNamespace(items=[to_model(p, "V1Pod") for p in raw])

    def _page(self, items: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """A list body; ``limit``/``_continue`` page it (the token is the next offset)."""
        start = int(kwargs.get("_continue") or 0)
        limit = kwargs.get("limit") or len(items) or 1
        meta = {"resourceVersion": str(self.version)}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
        return {"metadata": meta, "items": items[start:start + limit]}

    def list_namespaced_pod(self, namespace: str, **kwargs: Any) -> Any:
        return self._pods(namespace, kwargs)

    def list_pod_for_all_namespaces(self, **kwargs: Any) -> Any:
        return self._pods(None, kwargs)

    def delete_namespaced_pod(self, name: str, namespace: str, body: Any = None,
                              **kwargs: Any) -> Any:
        pre = body.preconditions if body is not None else None
        call = Delete(namespace, name, body.grace_period_seconds if body else None,
                      pre.uid if pre is not None else None)
        self.deletes.append(call)
        if self.on_delete is not None:
            self.on_delete(call)
        if self.fail_delete is not None:
            raise self.fail_delete
        stored = self.pods.get((namespace, name))
        if stored is None:
            raise ApiException(status=404, reason="Not Found")
        if call.uid_precondition and stored["metadata"]["uid"] != call.uid_precondition:
            raise ApiException(status=409, reason="Conflict")
        del self.pods[(namespace, name)]
        for listener in self.pod_listeners:
            listener("DELETED", stored)
        return RawResponse(stored) if kwargs.get("_preload_content") is False else None


def synced_cache(core: FakeCoreApi, scopes: frozenset[str] | None) -> podcache.PodCache:
    """A PodCache of ``scopes`` (None: all namespaces) listed from ``core``, kept current."""
    listed = podcache.scopes(scopes)
    cache = podcache.PodCache(listed)
    for scope in listed:
        cache.replace(scope, [p for (ns, _), p in core.pods.items() if scope in (None, ns)])
    core.pod_listeners.append(cache.apply)
    return cache


class FakeGate:
    """A Gate whose answer the test sets."""

    def __init__(self, lead: leader.Leadership | None = None) -> None:
        self.lead = lead
        self.asked = 0

    def current(self) -> leader.Leadership | None:
        self.asked += 1
        return self.lead


def event(kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A watch event as ``watching.RawWatch`` yields it (objects stay JSON)."""
    return {"type": kind, "object": raw, "raw_object": raw}


class FakeWatch:
    """Plays scripted streams (events; callables run; an exception ends one), then blocks."""

    def __init__(self, scripts: list[list[Any]], calls: list[dict[str, Any]]) -> None:
        self._scripts = scripts
        self._calls = calls
        self._stopped = threading.Event()
        self.idle = False

    def stream(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        self._calls.append(kwargs)
        if not self._scripts:
            self.idle = True
            self._stopped.wait(10)
            return
        for item in self._scripts.pop(0):
            if isinstance(item, BaseException):
                raise item
            if callable(item):  # a side effect, e.g. change the fake cluster
                item()
                continue
            yield item

    def stop(self) -> None:
        self._stopped.set()


class WatchFactory:
    """``watch_factory`` for a ListWatch: every Watch shares the remaining scripts."""

    def __init__(self, *scripts: list[Any]) -> None:
        self.scripts = list(scripts)
        self.calls: list[dict[str, Any]] = []
        self.watches: list[FakeWatch] = []

    @property
    def played(self) -> int:
        """Streams that ran a script (the rest found none and block until stopped)."""
        return sum(not w.idle for w in self.watches)

    def __call__(self) -> FakeWatch:
        w = FakeWatch(self.scripts, self.calls)
        self.watches.append(w)
        return w
