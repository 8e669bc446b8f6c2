"""Deciding: which pods to force-delete when, only while leader; the deletes go to a pool.

A node acted on before kcm fenced it (tainted it NoSchedule) gets a follow-up pass when
the fence is seen, and one more ``retry_delay_s`` later: the scheduler may have bound a
pod to it in between (a pod just force-deleted from another failed node), and no further
Ready transition would ever free that pod.

The node ListWatch feeds ``observe_list``/``observe_event`` (cheap: track Ready per
node, queue work); the elector calls ``on_started_leading``. One dispatcher thread
(``run_worker``) waits for the pod cache to sync, then turns each piece of work into
one delete per pod, read from the pod cache (no API request), and hands them to the
``FairPool``, keyed by node so every NotReady node's first delete goes out at once. A
piece of work whose deletes failed is retried whole after ``retry_delay_s``.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from zoneproof.components.reference.ha_controller import (
    deleting,
    leader,
    podcache,
    pool,
    ratelimit,
    selectors,
    transitions,
    variants,
)
from zoneproof.components.reference.ha_controller.transitions import PodRef, ReadyState

__all__ = ["Controller", "FollowUp", "Reconcile", "ControllerOptions", "Transition"]


@dataclass(frozen=True, slots=True)
class ControllerOptions:
    """What to delete and how; ``namespaces`` None means all namespaces."""

    selector: selectors.Selector
    namespaces: frozenset[str] | None
    identity: str
    variant: variants.Variant = variants.REFERENCE
    retry_delay_s: float = 2.0
    request_timeout_s: float = 30.0

    @property
    def behaviour(self) -> variants.Behaviour:
        """The variant's flags."""
        return self.variant.behaviour


@dataclass(frozen=True, slots=True)
class Transition:
    """Work: ``node`` went ``before`` → ``after`` and that transition acts."""

    node: str
    before: ReadyState | None
    after: ReadyState


@dataclass(frozen=True, slots=True)
class Reconcile:
    """Work: act on every node that is NotReady now (start, re-list, new leader)."""

    reason: str


@dataclass(frozen=True, slots=True)
class FollowUp:
    """Work: act again on ``node`` (still NotReady, now fenced); ``again`` schedules one more."""

    node: str
    again: bool = True


Work = Transition | Reconcile | FollowUp


def _start_timer(delay_s: float, action: Callable[[], None]) -> None:
    timer = threading.Timer(delay_s, action)
    timer.daemon = True
    timer.start()


class _Batch:
    """The deletes of one piece of work; ``on_done(all_ok)`` once the last one finished."""

    def __init__(self, on_done: Callable[[bool], None]) -> None:
        self._on_done = on_done
        self._left = 1  # the submitter's own hold, released by ``seal``
        self._ok = True
        self._lock = threading.Lock()

    def add(self) -> None:
        with self._lock:
            self._left += 1

    def finish(self, ok: bool) -> None:
        with self._lock:
            self._ok = self._ok and ok
            self._left -= 1
            done, all_ok = self._left == 0, self._ok
        if done:
            self._on_done(all_ok)

    def seal(self) -> None:
        """Every delete is submitted: the batch may now complete."""
        self.finish(True)


class Controller:
    """Node Ready transitions in, force deletes (through the pool) out."""

    def __init__(
        self,
        core: deleting.PodDeleteApi,
        gate: leader.Gate,
        settings: ControllerOptions,
        *,
        pods: podcache.PodCache,
        workers: pool.FairPool | None = None,
        limiter: ratelimit.TokenBucket | None = None,
        schedule: Callable[[float, Callable[[], None]], None] = _start_timer,
    ) -> None:
        self._gate = gate
        self._settings = settings
        self._pods = pods
        self.pool = workers or pool.FairPool(1)
        self._schedule = schedule
        self._emit = deleting.Emitter(gate, settings.identity, settings.variant.name)
        self._deleter = deleting.Deleter(
            core, gate, self._emit, grace_period_seconds=settings.behaviour.grace_period_seconds,
            request_timeout_s=settings.request_timeout_s, limiter=limiter)
        self._states: dict[str, ReadyState] = {}
        self._states_lock = threading.Lock()
        self._zones: dict[str, str] = {}
        self._unfenced: set[str] = set()
        """Nodes acted on while kcm had not yet fenced them: follow up when it does."""
        self._queue: queue.Queue[Work | None] = queue.Queue()
        self._closed = False

    @property
    def counters(self) -> deleting.Counters:
        """What the deletes did."""
        return self._deleter.counters

    # -- fed by the node ListWatch -----------------------------------------------------

    def observe_list(self, nodes: Iterable[Any], reason: str) -> None:
        """A fresh node list (start or after the watch broke): remember it, reconcile."""
        nodes = list(nodes)
        fresh = {transitions.node_name(n): transitions.ready_state(n) for n in nodes}
        self._zones = {transitions.node_name(n): transitions.node_zone(n) for n in nodes}
        with self._states_lock:
            old, self._states = self._states, fresh
        for name, after in sorted(fresh.items()):
            before = old.get(name)
            if before is not None and before != after:
                self._log_transition(name, before, after, acts=False, seen="relist")
        if self._settings.behaviour.reconcile:
            self._queue.put(Reconcile(reason))

    def observe_event(self, event_type: str, node: Any) -> None:
        """One watch event; queues a Transition when it acts."""
        name = transitions.node_name(node)
        if event_type == "DELETED":
            with self._states_lock:
                self._states.pop(name, None)
            self._unfenced.discard(name)
            return
        after = transitions.ready_state(node)
        self._zones[name] = transitions.node_zone(node)
        with self._states_lock:
            before = self._states.get(name)
            self._states[name] = after
        self._follow_up_if_fenced(name, after, node)
        if before is None or before == after:
            return
        flags = self._settings.behaviour
        acts = transitions.triggers_action(
            before, after, on_unknown=flags.act_on_unknown, on_false=flags.act_on_false,
            on_recovery=flags.act_on_recovery, on_not_ready_change=flags.act_on_not_ready_change)
        self._log_transition(name, before, after, acts=acts, seen="watch")
        if acts:
            self._queue.put(Transition(name, before, after))
            if flags.follow_up_when_fenced and not transitions.is_fenced(node):
                self._unfenced.add(name)

    def _follow_up_if_fenced(self, name: str, after: ReadyState, node: Any) -> None:
        if name not in self._unfenced:
            return
        if not transitions.is_not_ready(after):
            self._unfenced.discard(name)
        elif transitions.is_fenced(node):
            self._unfenced.discard(name)
            self._emit(logging.INFO, "node-fenced", node=name, follow_up=True)
            self._queue.put(FollowUp(name))

    # -- fed by the elector ------------------------------------------------------------

    def on_started_leading(self, leadership: leader.Leadership) -> None:
        """A new term: catch up on nodes that went NotReady while we were standby."""
        if self._settings.behaviour.reconcile:
            self._queue.put(Reconcile("became-leader"))

    def _resync(self, period_s: float) -> None:
        """The ``periodic-resync`` variant: a catch-up every ``period_s`` until closed
        (skipped unless leading, as every reconcile)."""
        while not self._closed:
            time.sleep(period_s)
            self._queue.put(Reconcile("resync"))

    # -- the dispatcher ----------------------------------------------------------------

    def run_worker(self) -> None:
        """Once the pod cache has synced, dispatch queued work until ``stop``."""
        while not self._pods.synced.wait(0.1):
            if self._closed:
                return
        self._emit(logging.INFO, "caches-synced", pods=len(self._pods))
        if self._settings.behaviour.resync_s > 0:
            _start_timer(0, lambda: self._resync(self._settings.behaviour.resync_s))
        while (item := self._queue.get()) is not None:
            self.process(item)

    def process_pending(self) -> int:
        """Dispatch what is queued and run its deletes, in this thread; the work items (tests)."""
        count = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                if not self.pool.run_pending():
                    return count
                continue
            if item is None:
                return count
            self.process(item)
            self.pool.run_pending()
            count += 1

    def stop(self, timeout_s: float | None = None) -> None:
        """No new deletes; returns once in-flight deletes have finished (or ``timeout_s``)."""
        self._closed = True
        self._deleter.closed = True
        self._queue.put(None)
        self.pool.stop(self._settings.request_timeout_s if timeout_s is None else timeout_s)

    def process(self, item: Work) -> None:
        """Dispatch one piece of work; it is retried after ``retry_delay_s`` if a delete fails."""
        if self._closed:
            return
        if isinstance(item, Transition):
            if self._state(item.node) != item.after:
                self._emit(logging.INFO, "transition-superseded", node=item.node,
                           expected=item.after.value)
                return
            self._act(item, [item.node], cause="transition")
        elif isinstance(item, FollowUp):
            state = self._state(item.node)
            if state is not None and transitions.is_not_ready(state):
                self._act(item, [item.node], cause="fenced" if item.again else "fenced-again")
        else:
            self._reconcile(item)

    # -- internals ---------------------------------------------------------------------

    def _state(self, node: str) -> ReadyState | None:
        with self._states_lock:
            return self._states.get(node)

    def _reconcile(self, item: Reconcile) -> None:
        if self._gate.current() is None:
            self._emit(logging.INFO, "reconcile-skipped", reason=item.reason, why="not-leader")
            return
        with self._states_lock:
            not_ready = sorted(n for n, s in self._states.items() if transitions.is_not_ready(s))
        self._emit(logging.INFO, "reconcile", reason=item.reason, not_ready_nodes=not_ready)
        self._act(item, not_ready, cause=f"reconcile:{item.reason}")

    def _act(self, item: Work, nodes: list[str], *, cause: str) -> None:
        """Queue one delete per chosen pod of ``nodes``; retry ``item`` if any fails."""
        batch = _Batch(lambda ok: self._done(item, ok))
        for node in self._widened(nodes):
            if self._gate.current() is None:
                self.counters.note("skipped-not-leader")
                self._emit(logging.INFO, "node-skipped", node=node, cause=cause, why="not-leader")
                continue
            for pod in self._chosen(node):
                batch.add()
                if not self.pool.submit(node, pod.uid or (pod.namespace, pod.name),
                                        self._delete_task(pod, node, cause, batch)):
                    batch.finish(True)  # the same delete is queued or in flight already
        batch.seal()

    def _widened(self, nodes: list[str]) -> list[str]:
        """``nodes``; with the ``deletes-zone`` variant every node of their zones."""
        if self._settings.behaviour.only_failed_node:
            return nodes
        zones = {self._zones.get(n, "") for n in nodes} - {""}
        return sorted(set(nodes) | {n for n, z in self._zones.items() if z in zones})

    def _chosen(self, node: str) -> list[PodRef]:
        flags, namespaces = self._settings.behaviour, self._settings.namespaces
        if not flags.split_namespaces and namespaces is not None:
            namespaces = frozenset({",".join(sorted(namespaces))})
        if not flags.only_watched_namespaces:
            namespaces = None
        chosen = transitions.pods_to_delete(
            self._pods.on_node(node), node=node, namespaces=namespaces,
            selector=self._settings.selector if flags.use_selector else None)
        return chosen if flags.delete_terminating else [p for p in chosen if not p.terminating]

    def catch_up_before_leading(self, deleter: deleting.Deleter, timeout_s: float) -> None:
        """The ``acts-before-lease`` variant: once the caches are synced (or ``timeout_s``),
        force-delete on every NotReady node now, in this thread, through ``deleter`` (whose
        gate does not ask the Lease)."""
        if not self._pods.synced.wait(timeout_s):
            return
        with self._states_lock:
            not_ready = sorted(n for n, s in self._states.items() if transitions.is_not_ready(s))
        self._emit(logging.INFO, "catch-up-before-lease", not_ready_nodes=not_ready)
        for node in not_ready:
            for pod in self._chosen(node):
                if deleter.delete(pod, node=node, cause="catch-up") in deleting.GONE:
                    self._pods.discard(pod)

    def _delete_task(self, pod: PodRef, node: str, cause: str,
                     batch: _Batch) -> Callable[[], None]:
        def task() -> None:
            result = deleting.FAILED
            try:
                result = self._deleter.delete(pod, node=node, cause=cause)
                if result in deleting.GONE:
                    self._pods.discard(pod)  # a follow-up pass must not find it again
            finally:
                batch.finish(result != deleting.FAILED)

        return task

    def _done(self, item: Work, ok: bool) -> None:
        """The last delete of ``item`` finished: retry it, or schedule the second follow-up."""
        if self._closed:
            return
        if not ok:
            retry: Work = item if not isinstance(item, Reconcile) else Reconcile("retry")
            self._schedule(self._settings.retry_delay_s, lambda: self._queue.put(retry))
        elif isinstance(item, FollowUp) and item.again:
            again = FollowUp(item.node, again=False)
            self._schedule(self._settings.retry_delay_s, lambda: self._queue.put(again))

    def _log_transition(self, node: str, before: ReadyState, after: ReadyState, *,
                        acts: bool, seen: str) -> None:
        self._emit(logging.INFO, "node-transition", node=node, before=before.value,
                   after=after.value, acts=acts, seen=seen)
