"""Controller logic on fake APIs: act once per transition, reconcile, idempotence, leadership.

The pod cache is kept current by the fake (``synced_cache``); deletes run through the
pool inline (``process_pending``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from zoneproof._util import waiting
from zoneproof.components.reference.ha_controller import (
    controller,
    leader,
    podcache,
    selectors,
    transitions,
    variants,
)
from zoneproof.components.reference.ha_controller.testing import (
    Delete,
    FakeCoreApi,
    FakeGate,
    node,
    synced_cache,
    to_model,
)

LEAD = leader.Leadership("replica-a", 7)


class Rig:
    """A controller on a fake cluster: n1, n2 Ready; noobaa pods on n1 in ns a and b."""

    def __init__(self, variant: str = "reference", *, lead: leader.Leadership | None = LEAD,
                 namespaces: frozenset[str] | None = frozenset({"a", "b"})) -> None:
        self.core = FakeCoreApi()
        self.core.add_node("n1")
        self.core.add_node("n2")
        self.core.add_pod("a", "noobaa-core-0", "n1")
        self.core.add_pod("b", "noobaa-db-0", "n1")
        self.core.add_pod("a", "web", "n1", {"app": "web"})
        self.core.add_pod("c", "noobaa-elsewhere", "n1")
        self.core.add_pod("a", "noobaa-n2", "n2")
        self.gate = FakeGate(lead)
        self.scheduled: list[tuple[float, Callable[[], None]]] = []
        self.ctl = controller.Controller(
            self.core, self.gate,
            controller.ControllerOptions(selector=selectors.parse_selector("app=noobaa"),
                                namespaces=namespaces, identity="replica-a",
                                variant=variants.get_variant(variant)),
            pods=synced_cache(self.core, namespaces),
            schedule=lambda delay, action: self.scheduled.append((delay, action)))
        self.ctl.observe_list(self.core.list_node().items, "start")
        self.ctl.process_pending()

    def set_ready(self, name: str, status: str | None, kind: str = "MODIFIED",
                  taints: tuple[str, ...] = ()) -> None:
        self.core.nodes[name] = node(name, status, taints=taints)
        self.ctl.observe_event(kind, to_model(self.core.nodes[name], "V1Node"))

    def deleted(self) -> list[tuple[str, str]]:
        return [(d.namespace, d.name) for d in self.core.deletes]


def records(caplog: pytest.LogCaptureFixture, event: str) -> list[dict[str, Any]]:
    return [r.fields for r in caplog.records if getattr(r, "event", None) == event]  # type: ignore[attr-defined]


@pytest.mark.parametrize("status", ["False", "Unknown"])
def test_acts_once_per_transition(status: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    rig = Rig()
    rig.set_ready("n1", status)
    assert rig.ctl.process_pending() == 1
    assert rig.deleted() == [("a", "noobaa-core-0"), ("b", "noobaa-db-0")]
    assert all(d.grace_period_seconds == 0 for d in rig.core.deletes)
    assert [d.uid_precondition for d in rig.core.deletes] == ["uid-noobaa-core-0", "uid-noobaa-db-0"]
    rig.set_ready("n1", status)  # same state again
    rig.set_ready("n1", "Unknown" if status == "False" else "False")  # NotReady → NotReady
    assert rig.ctl.process_pending() == 0
    assert len(rig.core.deletes) == 2
    lines = records(caplog, "pod-delete")
    assert [(x["node"], x["namespace"], x["pod"]) for x in lines] == [
        ("n1", "a", "noobaa-core-0"), ("n1", "b", "noobaa-db-0")]
    assert all(x["identity"] == "replica-a" and x["lease_transitions"] == 7 for x in lines)
    assert all(x["result"] == "deleted" and x["cause"] == "transition" for x in lines)
    assert all(x["sent"].endswith("+00:00") and x["seconds"] >= 0 for x in lines)
    transition = records(caplog, "node-transition")[0]
    assert transition["before"] == "True" and transition["after"] == status
    assert transition["acts"] is True and transition["lease_transitions"] == 7


@pytest.mark.parametrize(
    "history",
    [[("ADDED", "False"), ("MODIFIED", "True")],
     [("ADDED", "Unknown"), ("MODIFIED", "True")],
     [("ADDED", "True"), ("MODIFIED", "True")],
     [("ADDED", None), ("MODIFIED", "False")],
     [("ADDED", "False")]],
    ids=["recovery-from-false", "recovery-from-unknown", "ready-ready", "missing-to-false",
         "new-node"],
)
def test_other_events_do_not_act(history: list[tuple[str, str | None]]) -> None:
    rig = Rig()
    rig.core.add_pod("a", "noobaa-n3", "n3")
    for kind, status in history:
        rig.set_ready("n3", status, kind)
    assert rig.ctl.process_pending() == 0
    assert rig.deleted() == []


def test_deleted_node_is_forgotten() -> None:
    rig = Rig()
    rig.ctl.observe_event("DELETED", to_model(node("n1"), "V1Node"))
    rig.set_ready("n1", "False")  # unseen node now: not a known True→False
    rig.ctl.process_pending()
    assert rig.deleted() == []


def test_reconciles_on_start(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    core = FakeCoreApi()
    core.add_node("n1", "Unknown")
    core.add_node("n2", "True")
    core.add_pod("a", "noobaa-0", "n1")
    core.add_pod("a", "noobaa-1", "n2")
    ctl = controller.Controller(core, FakeGate(LEAD), controller.ControllerOptions(
        selectors.parse_selector("app=noobaa"), frozenset({"a"}), "replica-a"),
        pods=synced_cache(core, frozenset({"a"})))
    ctl.observe_list(core.list_node().items, "start")
    ctl.process_pending()
    assert [(d.namespace, d.name) for d in core.deletes] == [("a", "noobaa-0")]
    (line,) = records(caplog, "reconcile")
    assert line["reason"] == "start" and line["not_ready_nodes"] == ["n1"]
    assert records(caplog, "pod-delete")[0]["cause"] == "reconcile:start"


def test_missed_transition_is_caught_on_relist() -> None:
    rig = Rig()
    rig.core.nodes["n1"] = node("n1", "False")  # happened while the watch was down
    rig.ctl.observe_list(rig.core.list_node().items, "watch-expired")
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-core-0"), ("b", "noobaa-db-0")]


def test_never_acts_when_not_leader_then_catches_up(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    rig = Rig(lead=None)
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    assert rig.deleted() == []
    assert records(caplog, "node-skipped")[0]["why"] == "not-leader"
    rig.gate.lead = LEAD
    rig.ctl.on_started_leading(LEAD)
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-core-0"), ("b", "noobaa-db-0")]
    assert {x["cause"] for x in records(caplog, "pod-delete")} == {"reconcile:became-leader"}


def test_leadership_is_checked_before_each_delete(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    rig = Rig()

    def lose_after_first(_: Delete) -> None:
        rig.gate.lead = None

    rig.core.on_delete = lose_after_first
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-core-0")]
    (skipped,) = records(caplog, "pod-delete-skipped")
    assert skipped["pod"] == "noobaa-db-0" and skipped["why"] == "not-leader"
    assert rig.scheduled == []  # not leader is not a failure to retry


@pytest.mark.parametrize(("status", "result"), [(404, "not-found"), (409, "replaced")])
def test_gone_or_replaced_pod_is_fine(status: int, result: str,
                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    rig = Rig()

    def meddle(d: Delete) -> None:  # between our list and our delete
        if status == 404:
            rig.core.pods.pop((d.namespace, d.name))
        else:  # the StatefulSet recreated the pod under the same name
            rig.core.pods[(d.namespace, d.name)]["metadata"]["uid"] = "new-uid"

    rig.core.on_delete = meddle
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    assert [x["result"] for x in records(caplog, "pod-delete")] == [result, result]
    assert rig.scheduled == [] and rig.ctl.counters.failed == 0
    if status == 409:
        assert ("a", "noobaa-core-0") in rig.core.pods  # the replacement survives


def test_repeated_delete_is_idempotent() -> None:
    rig = Rig()
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    ref = transitions.PodRef("a", "noobaa-core-0", "uid-noobaa-core-0", "n1")
    assert rig.ctl._deleter.delete(ref, node="n1", cause="test") == "not-found"
    assert rig.ctl.counters.by_result == {"deleted": 2, "not-found": 1}


def test_failed_delete_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    rig = Rig()
    rig.core.fail_delete = ApiException(status=500, reason="etcd down")
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    assert rig.ctl.counters.failed == 2
    assert records(caplog, "pod-delete-failed")[0]["lease_transitions"] == 7
    ((delay, retry),) = rig.scheduled
    assert delay == 2.0
    rig.core.fail_delete = None
    retry()
    rig.ctl.process_pending()
    assert rig.ctl.counters.deleted == 2


def test_reconcile_reads_the_caches_not_the_api() -> None:
    rig = Rig()
    rig.core.fail_list = ApiException(status=503, reason="unavailable")
    rig.core.nodes["n1"] = node("n1", "False")
    rig.ctl.observe_list([to_model(n, "V1Node") for n in rig.core.nodes.values()], "x")
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-core-0"), ("b", "noobaa-db-0")]
    assert rig.core.list_calls == [] and rig.scheduled == []


def test_superseded_transition_does_not_act() -> None:
    rig = Rig()
    rig.set_ready("n1", "False")
    rig.set_ready("n1", "True")  # recovered before the worker got to it
    rig.ctl.process_pending()
    assert rig.deleted() == []


def test_all_namespaces_from_the_cache() -> None:
    rig = Rig(namespaces=None)
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    assert rig.core.list_calls == []  # no LIST per node: the pod cache answers
    assert ("c", "noobaa-elsewhere") in rig.deleted()  # all namespaces
    assert ("a", "web") not in rig.deleted()  # still only the selector's pods


def test_a_pod_the_cache_has_not_seen_yet_is_left_alone() -> None:
    """The cache, not a fresh LIST, says what is on the node; a later pass sees the rest."""
    rig = Rig()
    rig.core.pod_listeners.clear()  # the watch lags from here on
    rig.core.add_pod("a", "noobaa-unseen", "n1")
    rig.set_ready("n1", "False")
    rig.ctl.process_pending()
    assert ("a", "noobaa-unseen") not in rig.deleted()
    assert len(rig.deleted()) == 2


def test_a_follow_up_does_not_delete_again_what_the_watch_still_shows() -> None:
    rig = Rig()
    rig.core.pod_listeners.clear()  # the watch lags: no DELETED events reach the cache
    rig.set_ready("n1", "Unknown")
    rig.ctl.process_pending()
    rig.ctl.process(controller.FollowUp("n1", again=False))
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-core-0"), ("b", "noobaa-db-0")]
    assert rig.ctl.counters.by_result == {"deleted": 2}


def test_a_delete_in_flight_is_not_queued_twice() -> None:
    rig = Rig()
    rig.set_ready("n1", "Unknown")
    rig.ctl.process(controller.FollowUp("n1", again=False))  # before the pool ran
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-core-0"), ("b", "noobaa-db-0")]
    assert rig.ctl.counters.by_result == {"deleted": 2}


def test_stopped_controller_does_nothing() -> None:
    rig = Rig()
    rig.set_ready("n1", "False")
    rig.ctl.stop()
    rig.ctl.process_pending()
    rig.ctl.process(controller.Reconcile("late"))
    assert rig.deleted() == []


def test_dispatcher_and_pool_threads_drain_until_stop() -> None:
    rig = Rig()
    rig.set_ready("n1", "False")
    threads = [threading.Thread(target=rig.ctl.run_worker),
               threading.Thread(target=rig.ctl.pool.work)]
    for thread in threads:
        thread.start()
    rig.ctl._queue.put(None)
    threads[0].join(5)
    assert rig.ctl.pool.wait_idle(5)
    rig.ctl.stop()
    threads[1].join(5)
    assert not any(thread.is_alive() for thread in threads)
    assert len(rig.deleted()) == 2


def test_dispatcher_waits_for_the_pod_cache() -> None:
    core = FakeCoreApi()
    core.add_node("n1", "False")
    core.add_pod("a", "noobaa-0", "n1")
    pods = podcache.PodCache(["a"])
    ctl = controller.Controller(core, FakeGate(LEAD), controller.ControllerOptions(
        selectors.parse_selector("app=noobaa"), frozenset({"a"}), "replica-a"), pods=pods)
    ctl.observe_list(core.list_node().items, "start")
    thread = threading.Thread(target=ctl.run_worker)
    thread.start()
    try:
        time.sleep(0.3)
        assert ctl.pool.pending == 0 and core.deletes == [], "acted before the cache synced"
        pods.replace("a", core.pods.values())
        waiting.wait_for(lambda: (ctl.pool.pending == 1, ctl.pool.pending),
                         what="the delete queued", timeout_s=5, interval_s=0.01)
    finally:
        ctl.stop(timeout_s=1)
        thread.join(5)
    assert not thread.is_alive()


UNREACHABLE = ("node.kubernetes.io/unreachable:NoSchedule",)


def test_follows_up_when_fenced_after_acting(caplog: pytest.LogCaptureFixture) -> None:
    """A pod bound to the node between its NotReady transition and kcm's taint is freed."""
    caplog.set_level(logging.INFO)
    rig = Rig()
    rig.set_ready("n2", "Unknown")
    rig.ctl.process_pending()
    assert rig.deleted() == [("a", "noobaa-n2")]
    rig.core.add_pod("a", "noobaa-core-1", "n2")  # rescheduled there before the taint
    rig.set_ready("n2", "Unknown", taints=UNREACHABLE)
    assert rig.ctl.process_pending() == 1
    assert rig.deleted()[-1] == ("a", "noobaa-core-1")
    assert [x["cause"] for x in records(caplog, "pod-delete")][-1] == "fenced"
    (delay, again), = rig.scheduled
    assert delay == 2.0
    rig.core.add_pod("a", "noobaa-core-2", "n2")  # bound by a scheduler a beat behind
    again()
    assert rig.ctl.process_pending() == 1
    assert rig.deleted()[-1] == ("a", "noobaa-core-2")
    assert len(rig.scheduled) == 1, "the second pass is the last"
    rig.set_ready("n2", "Unknown", taints=UNREACHABLE)  # later updates: no more passes
    assert rig.ctl.process_pending() == 0


@pytest.mark.parametrize("fenced_first", [True, False], ids=["fenced-with-notready", "recovered"])
def test_no_follow_up_without_a_late_fence(fenced_first: bool) -> None:
    rig = Rig()
    rig.set_ready("n2", "False", taints=UNREACHABLE if fenced_first else ())
    rig.ctl.process_pending()
    if not fenced_first:
        rig.set_ready("n2", "True")
    rig.set_ready("n2", "False" if fenced_first else "True", taints=UNREACHABLE)
    rig.core.add_pod("a", "noobaa-late", "n2")
    assert rig.ctl.process_pending() == 0
    assert ("a", "noobaa-late") not in rig.deleted()
    assert rig.scheduled == []
