"""The list-then-watch loop: resourceVersion handling, re-list + reconcile on 410 / drops."""

from __future__ import annotations

import threading

import urllib3
from kubernetes.client.exceptions import ApiException

from zoneproof._util import waiting
from zoneproof.components.reference.ha_controller import controller, selectors, watching
from zoneproof.components.reference.ha_controller.leader import Leadership
from zoneproof.components.reference.ha_controller.testing import (
    FakeCoreApi,
    FakeGate,
    WatchFactory,
    event,
    node,
)


def make(core: FakeCoreApi, factory: WatchFactory) -> tuple[controller.Controller,
                                                           watching.NodeWatcher]:
    ctl = controller.Controller(core, FakeGate(Leadership("a", 1)), controller.Settings(
        selectors.parse_selector("app=noobaa"), None, "a"))
    return ctl, watching.NodeWatcher(core, ctl, watch_factory=factory, timeout_s=60,
                                     backoff_s=0)


def run_until_idle(watcher: watching.NodeWatcher, factory: WatchFactory) -> None:
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
    core.add_pod("a", "noobaa-0", "n1")
    factory = WatchFactory(
        [event("MODIFIED", node("n1", "True", rv="101")),
         event("BOOKMARK", {"metadata": {"resourceVersion": "150"}}),
         event("MODIFIED", node("n1", "False", rv="160"))],
    )
    ctl, watcher = make(core, factory)
    run_until_idle(watcher, factory)
    assert factory.calls[0]["resource_version"] == "100"  # from the list
    assert factory.calls[0]["timeout_seconds"] == 60
    assert factory.calls[0]["allow_watch_bookmarks"] is True
    assert factory.calls[1]["resource_version"] == "160"  # resumed, no re-list
    assert watcher.relists == 1
    ctl.process_pending()
    assert [(d.namespace, d.name) for d in core.deletes] == [("a", "noobaa-0")]


def test_gone_relists_and_reconciles() -> None:
    core = FakeCoreApi()
    core.add_node("n1")
    core.add_pod("a", "noobaa-0", "n1")
    ctl, watcher = make(core, WatchFactory())
    factory = WatchFactory([ApiException(status=410, reason="Gone")])
    watcher._watch_factory = factory
    ctl.process_pending()

    def node_fails_during_gap() -> None:  # the transition is never seen as an event
        core.nodes["n1"] = node("n1", "False")
        core.version = 200

    original = core.list_node
    calls = {"n": 0}

    def list_node(**kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 2:
            node_fails_during_gap()
        return original(**kwargs)

    core.list_node = list_node  # type: ignore[method-assign]
    run_until_idle(watcher, factory)
    assert watcher.relists == 2
    assert factory.calls[-1]["resource_version"] == "200"
    ctl.process_pending()
    assert [(d.namespace, d.name) for d in core.deletes] == [("a", "noobaa-0")]


def test_dropped_connection_relists() -> None:
    core = FakeCoreApi()
    core.add_node("n1")
    factory = WatchFactory(
        [event("MODIFIED", node("n1", "True", rv="120")),
         urllib3.exceptions.ProtocolError("Connection broken")],
        [ApiException(status=500, reason="ERROR event")],
    )
    _, watcher = make(core, factory)
    run_until_idle(watcher, factory)
    assert watcher.relists == 3


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
