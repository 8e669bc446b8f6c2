"""The pods the controller may act on, kept by list+watch and indexed by node name.

Fed by one ``watching.ListWatch`` per scope (a namespace, or None for all namespaces):
``replace`` with each (re-)list, ``apply`` with each watch event. Only ``PodRef``s are
kept (namespace, name, uid, node, labels), not whole pods. ``synced`` is set once every
scope has been listed: the controller acts on nothing before (client-go's
WaitForCacheSync), so a catch-up at start never misses a pod.

A cached pod can be stale by a watch event; deleting it is still safe: the delete
carries the pod's uid as a precondition, so a pod recreated under the same name is
never hit (409), and a pod already gone answers 404. ``discard`` drops a pod this
process has just deleted without waiting for its DELETED event (a loaded API server
delivers it seconds later, and a follow-up pass would delete it again); until that event
or the next list, a late event about that uid does not bring it back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from zoneproof.components.reference.ha_controller import transitions
from zoneproof.components.reference.ha_controller.transitions import PodRef

__all__ = ["PodCache", "scopes"]

_Key = tuple[str, str]


def scopes(namespaces: frozenset[str] | None) -> list[str | None]:
    """One list+watch scope per namespace, sorted; ``[None]`` (all namespaces) for None."""
    return [None] if namespaces is None else [*sorted(namespaces)]


class PodCache:
    """Thread-safe store of PodRefs by (namespace, name), with an index by node name."""

    def __init__(self, scopes: Iterable[str | None]) -> None:
        self._scopes = frozenset(scopes)
        self._listed: set[str | None] = set()
        self._pods: dict[_Key, PodRef] = {}
        self._by_node: dict[str, dict[_Key, PodRef]] = {}
        self._gone: dict[str, str] = {}
        """uid → namespace of pods discarded here whose DELETED event has not come yet."""
        self._lock = threading.Lock()
        self.synced = threading.Event()

    def replace(self, scope: str | None, pods: Iterable[Any]) -> None:
        """A fresh list of ``scope`` (a namespace; None: all): it replaces what was cached there."""
        fresh = [transitions.pod_ref(p) for p in pods]
        with self._lock:
            for key in [k for k in self._pods if scope is None or k[0] == scope]:
                self._remove(key)
            listed = {r.uid for r in fresh}
            self._gone = {uid: ns for uid, ns in self._gone.items()  # the rest are gone
                          if uid in listed or (scope is not None and ns != scope)}
            for ref in fresh:
                if ref.uid not in self._gone:
                    self._put(ref)
            self._listed.add(scope)
            if self._listed >= self._scopes:
                self.synced.set()

    def apply(self, event_type: str, pod: Any) -> None:
        """One watch event (ADDED, MODIFIED, DELETED) of a pod dict or model."""
        ref = transitions.pod_ref(pod)
        with self._lock:
            if event_type == "DELETED":
                self._gone.pop(ref.uid or "", None)
            elif ref.uid in self._gone:
                return  # a late event about a pod deleted here
            self._remove((ref.namespace, ref.name))
            if event_type != "DELETED":
                self._put(ref)

    def discard(self, ref: PodRef) -> None:
        """``ref`` was deleted (or found gone): forget it, if the cache still has that uid."""
        with self._lock:
            cached = self._pods.get((ref.namespace, ref.name))
            if cached is not None and cached.uid == ref.uid:
                self._remove((ref.namespace, ref.name))
            if ref.uid:
                self._gone[ref.uid] = ref.namespace

    def on_node(self, node: str) -> list[PodRef]:
        """The cached pods bound to ``node``, sorted by namespace and name."""
        with self._lock:
            bound = self._by_node.get(node, {})
            return [bound[key] for key in sorted(bound)]

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)

    def _put(self, ref: PodRef) -> None:
        key = (ref.namespace, ref.name)
        self._pods[key] = ref
        if ref.node_name:
            self._by_node.setdefault(ref.node_name, {})[key] = ref

    def _remove(self, key: _Key) -> None:
        old = self._pods.pop(key, None)
        if old is None or not old.node_name:
            return
        bound = self._by_node.get(old.node_name)
        if bound is not None:
            bound.pop(key, None)
            if not bound:
                del self._by_node[old.node_name]
