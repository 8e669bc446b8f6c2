"""Watch caches with a fake API: list, apply events, re-list on 410 Gone and on dropped connections."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from zoneproof._util import waiting
from zoneproof.components.reference.ha_config import informers
from zoneproof.specs.ha_config import facts


def node(name: str) -> Any:
    return SimpleNamespace(metadata=SimpleNamespace(name=name))


def listing(*names: str, version: str = "10") -> Any:
    return SimpleNamespace(items=[node(n) for n in names], metadata=SimpleNamespace(resource_version=version))


def event(kind: str, name: str, version: str) -> dict[str, Any]:
    return {"type": kind, "object": node(name), "raw_object": {"metadata": {"resourceVersion": version}}}


class FakeWatch:
    """Plays one scripted stream per watch (exceptions in it are raised), then blocks until stopped."""

    def __init__(self, scripts: list[list[Any]], seen: list[dict[str, Any]]) -> None:
        self._scripts = scripts
        self._seen = seen
        self._stopped = threading.Event()

    def stream(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        self._seen.append(kwargs)
        script = self._scripts.pop(0) if self._scripts else []
        for item in script:
            if isinstance(item, BaseException):
                raise item
            yield item
        self._stopped.wait(5)

    def stop(self) -> None:
        self._stopped.set()


def run_informer(lists: list[Any], scripts: list[list[Any]]
                 ) -> tuple[informers.Informer[None], list[int], list[dict[str, Any]], threading.Thread]:
    counts: list[int] = []
    seen: list[dict[str, Any]] = []
    watches: list[FakeWatch] = []

    def factory() -> FakeWatch:
        watches.append(FakeWatch(scripts, seen))
        return watches[-1]

    def list_nodes(**_: Any) -> Any:
        item = lists.pop(0) if len(lists) > 1 else lists[0]
        if isinstance(item, BaseException):
            raise item
        return item

    informer: informers.Informer[None] = informers.Informer(
        "nodes", list_nodes, lambda n: (n.metadata.name, None), on_change=counts.append,
        watch_factory=factory, backoff_s=0.01)
    thread = threading.Thread(target=informer.run, daemon=True)
    thread.start()
    return informer, counts, seen, thread


def stop(informer: informers.Informer[Any], thread: threading.Thread) -> None:
    informer.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_list_then_watch_events() -> None:
    script = [event("ADDED", "c", "11"), {"type": "BOOKMARK", "object": None,
                                          "raw_object": {"metadata": {"resourceVersion": "12"}}},
              event("DELETED", "a", "13"), event("MODIFIED", "b", "14")]
    informer, counts, seen, thread = run_informer([listing("a", "b")], [script])
    waiting.wait_for(lambda: (counts[-3:] == [3, 2, 2], counts), what="events applied", timeout_s=5)
    assert informer.synced.is_set() and informer.relists == 1
    assert len(informer.values()) == 2
    assert seen[0]["resource_version"] == "10" and seen[0]["allow_watch_bookmarks"] is True
    stop(informer, thread)


@pytest.mark.parametrize("failure", [ApiException(status=410, reason="Gone"),
                                     ApiException(status=500, reason="boom"),
                                     urllib3.exceptions.ProtocolError("dropped"), ConnectionResetError()])
def test_relists_after_watch_failures(failure: BaseException) -> None:
    informer, counts, seen, thread = run_informer([listing("a", version="5"), listing("a", "b", version="9")],
                                                  [[failure]])
    waiting.wait_for(lambda: (informer.relists == 2 and len(seen) == 2, (informer.relists, seen)),
                     what="a re-list and a new watch", timeout_s=5)
    assert seen[1]["resource_version"] == "9"
    assert counts == [1, 2]
    stop(informer, thread)


def test_list_failures_retry_and_leave_the_cache_unsynced_until_then() -> None:
    informer, _, _, thread = run_informer([ConnectionRefusedError(), listing("a")], [])
    waiting.wait_for(lambda: (informer.synced.is_set(), informer.relists), what="synced", timeout_s=5)
    stop(informer, thread)


def test_cluster_cache_reads_fail_until_synced() -> None:
    cache = informers.ClusterCache(api=None, watch_factory=lambda: FakeWatch([], []))
    assert not cache.synced()
    for read in (lambda: cache.namespace("x"), lambda: cache.hpas("x"), cache.node_count):
        with pytest.raises(facts.FactsError, match="has not synced"):
            read()


def test_cluster_cache_answers_from_synced_informers() -> None:
    cache = informers.ClusterCache(api=None, watch_factory=lambda: FakeWatch([], []))
    namespace = SimpleNamespace(metadata=SimpleNamespace(name="team", labels={"l": "1"}, annotations=None))
    hpa = SimpleNamespace(metadata=SimpleNamespace(name="h", namespace="team"), spec=SimpleNamespace(
        max_replicas=4,
        scale_target_ref=SimpleNamespace(api_version="apps/v1", kind="Deployment", name="app")))
    other = SimpleNamespace(metadata=SimpleNamespace(name="h", namespace="other"), spec=hpa.spec)
    for informer, items in ((cache.nodes, [node("n1"), node("n2")]), (cache.namespaces, [namespace]),
                            (cache.hpa_cache, [hpa, other])):
        informer._list = lambda _items=items, **_: SimpleNamespace(
            items=_items, metadata=SimpleNamespace(resource_version="1"))
    cache.start()
    try:
        waiting.wait_for(lambda: (cache.synced(), None), what="cache synced", timeout_s=5)
        assert cache.node_count() == 2
        assert cache.namespace("team") == facts.NamespaceInfo("team", {"l": "1"}, {})
        assert cache.hpas("team") == (facts.HpaInfo("h", "apps/v1", "Deployment", "app", 4),)
        with pytest.raises(facts.FactsError, match='namespaces "nope" not found'):
            cache.namespace("nope")
    finally:
        cache.stop()
