"""The list-then-watch loop: resourceVersion handling, re-list on 410 / drops, raw JSON."""

from __future__ import annotations

import functools
import threading
from typing import Any

import urllib3
from kubernetes.client.exceptions import ApiException

from zoneproof._util import waiting
from zoneproof.components.reference.ha_controller import ratelimit, watching
from zoneproof.components.reference.ha_controller.testing import (
    FakeCoreApi,
    WatchFactory,
    event,
    node,
    pod,
)


class Seen:
    """What a ListWatch handed over."""

    def __init__(self) -> None:
        self.lists: list[tuple[list[str], str]] = []
        self.events: list[tuple[str, str]] = []

    def on_list(self, items: list[Any], reason: str) -> None:
        assert all(isinstance(i, dict) for i in items), "raw JSON, not client models"
        self.lists.append(([i["metadata"]["name"] for i in items], reason))

    def on_event(self, kind: str, obj: Any) -> None:
        assert isinstance(obj, dict)
        self.events.append((kind, obj["metadata"]["name"]))


def make(core: FakeCoreApi, factory: WatchFactory, **kwargs: Any
         ) -> tuple[Seen, watching.ListWatch]:
    seen = Seen()
    return seen, watching.ListWatch("nodes", core.list_node, on_list=seen.on_list,
                                    on_event=seen.on_event, watch_factory=factory,
                                    timeout_s=60, backoff_s=0, **kwargs)


def run_until_idle(watcher: watching.ListWatch, factory: WatchFactory) -> None:
    """Run the loop in a thread until every script was played and it blocks, then stop."""
    thread = threading.Thread(target=watcher.run)
    thread.start()
    try:
        waiting.wait_for(lambda: (not factory.scripts and len(factory.calls) > factory.played,
                                  factory.calls), what="scripts played", timeout_s=5,
                         interval_s=0.01)
    finally:
        watcher.stop()
        thread.join(5)
    assert not thread.is_alive()


def test_watches_from_list_version_and_follows_events() -> None:
    core = FakeCoreApi()
    core.add_node("n1")
    factory = WatchFactory(
        [event("MODIFIED", node("n1", "True", rv="101")),
         event("BOOKMARK", {"metadata": {"resourceVersion": "150"}}),
         event("MODIFIED", node("n1", "False", rv="160"))],
    )
    seen, watcher = make(core, factory)
    run_until_idle(watcher, factory)
    assert factory.calls[0]["resource_version"] == "100"  # from the list
    assert factory.calls[0]["timeout_seconds"] == 60
    assert factory.calls[0]["allow_watch_bookmarks"] is True
    assert factory.calls[1]["resource_version"] == "160"  # resumed, no re-list
    assert watcher.relists == 1
    assert seen.lists == [(["n1"], "start")]
    assert seen.events == [("MODIFIED", "n1"), ("MODIFIED", "n1")]  # no BOOKMARK


def test_gone_relists() -> None:
    core = FakeCoreApi()
    core.add_node("n1")

    def node_added_during_gap() -> None:  # never seen as an event
        core.add_node("n2")
        core.version = 200

    factory = WatchFactory([node_added_during_gap, ApiException(status=410, reason="Gone")])
    seen, watcher = make(core, factory)
    run_until_idle(watcher, factory)
    assert watcher.relists == 2
    assert seen.lists == [(["n1"], "start"), (["n1", "n2"], "watch-expired")]
    assert factory.calls[-1]["resource_version"] == "200"


def test_dropped_connection_relists() -> None:
    core = FakeCoreApi()
    core.add_node("n1")
    factory = WatchFactory(
        [event("MODIFIED", node("n1", "True", rv="120")),
         urllib3.exceptions.ProtocolError("Connection broken")],
        [ApiException(status=500, reason="ERROR event")],
    )
    seen, watcher = make(core, factory)
    run_until_idle(watcher, factory)
    assert watcher.relists == 3
    assert [reason for _, reason in seen.lists] == ["start", "watch-dropped", "watch-error"]


def test_failed_list_is_retried() -> None:
    core = FakeCoreApi()
    core.fail_list = ApiException(status=503, reason="unavailable")
    factory = WatchFactory()
    _, watcher = make(core, factory)
    thread = threading.Thread(target=watcher.run)
    thread.start()
    try:
        waiting.wait_for(lambda: (core.list_failures >= 2, core.list_failures),
                         what="list retried", timeout_s=5, interval_s=0.01)
        assert watcher.relists == 0 and factory.calls == []
        core.fail_list = None
        waiting.wait_for(lambda: (bool(factory.calls), factory.calls), what="watch started",
                         timeout_s=5, interval_s=0.01)
    finally:
        watcher.stop()
        thread.join(5)
    assert watcher.relists == 1 and not thread.is_alive()


def test_pods_of_one_namespace_with_the_selector() -> None:
    core = FakeCoreApi()
    core.add_pod("a", "noobaa-0", "n1")
    core.add_pod("a", "web-0", "n1", {"app": "web"})
    core.add_pod("b", "noobaa-1", "n1")
    seen = Seen()
    factory = WatchFactory()
    watcher = watching.ListWatch(
        "pods/a", functools.partial(core.list_namespaced_pod, "a"), on_list=seen.on_list,
        on_event=seen.on_event, query={"label_selector": "app=noobaa"}, watch_factory=factory)
    assert watcher.relist("start") == "100"
    assert seen.lists == [(["noobaa-0"], "start")]
    (call,) = core.list_calls
    assert call["namespace"] == "a" and call["label_selector"] == "app=noobaa"
    assert "field_selector" not in call  # one list for every node, not one per node


def test_a_list_is_read_in_pages() -> None:
    core = FakeCoreApi()
    for i in range(5):
        core.add_pod("a", f"noobaa-{i}", "n1")
    seen = Seen()
    watcher = watching.ListWatch("pods/*", core.list_pod_for_all_namespaces,
                                 on_list=seen.on_list, on_event=seen.on_event, page_size=2)
    assert watcher.relist("start") == "100"
    assert seen.lists == [([f"noobaa-{i}" for i in range(5)], "start")]
    assert [(c["limit"], c["_continue"]) for c in core.list_calls] == [
        (2, None), (2, "2"), (2, "4")]


def test_lists_and_watches_take_a_token() -> None:
    taken: list[float] = []
    bucket = ratelimit.TokenBucket(1, 1, clock=lambda: 0.0, sleep=taken.append)
    core = FakeCoreApi()
    factory = WatchFactory([])
    _, watcher = make(core, factory, limiter=bucket)
    run_until_idle(watcher, factory)
    assert taken[:2] == [1.0, 2.0]  # the list took the saved token; the watches waited


def test_raw_watch_keeps_json() -> None:
    assert watching.RawWatch().get_return_type(FakeCoreApi().list_node) is None
    line = '{"type": "ADDED", "object": ' + str(pod("a", "p", "n1")).replace("'", '"') + "}"
    decoded = watching.RawWatch().unmarshal_event(line, None)
    assert decoded["object"] == decoded["raw_object"] == pod("a", "p", "n1")
