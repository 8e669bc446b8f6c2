"""Acting: force-delete matching pods on nodes that went NotReady, only while leader.

A node acted on before kcm fenced it (tainted it NoSchedule) gets a follow-up pass when
the fence is seen, and one more ``retry_delay_s`` later: the scheduler may have bound a
pod to it in between (a pod just force-deleted from another failed node), and no further
Ready transition would ever free that pod.

The watcher thread feeds ``observe_list``/``observe_event`` (cheap: track Ready per node,
queue work); the elector calls ``on_started_leading``; one worker thread runs
``run_worker`` and does every API write, so deletes are serialised and leadership is
checked immediately before each one.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_controller import leader, selectors, transitions, variants
from zoneproof.components.reference.ha_controller.transitions import ReadyState

__all__ = ["Controller", "CoreApi", "FollowUp", "Reconcile", "Settings", "Transition"]

log = logging.getLogger(__name__)


class CoreApi(Protocol):
    """The CoreV1Api calls the controller and watcher use."""

    def list_node(self, **kwargs: Any) -> Any:
        """GET nodes (also the watch function)."""

    def list_namespaced_pod(self, namespace: str, **kwargs: Any) -> Any:
        """GET pods in one namespace."""

    def list_pod_for_all_namespaces(self, **kwargs: Any) -> Any:
        """GET pods in every namespace."""

    def delete_namespaced_pod(self, name: str, namespace: str, **kwargs: Any) -> Any:
        """DELETE one pod."""


@dataclass(frozen=True, slots=True)
class Settings:
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
    """Work: act on every node that is NotReady now (start, re-list, new leader, retry)."""

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


@dataclass
class _Counters:
    """What the worker did, for tests and the shutdown log line."""

    deleted: int = 0
    skipped_not_leader: int = 0
    failed: int = 0
    by_result: dict[str, int] = field(default_factory=dict)


class Controller:
    """Node Ready transitions in, force deletes out."""

    def __init__(
        self,
        core: CoreApi,
        gate: leader.Gate,
        settings: Settings,
        *,
        schedule: Callable[[float, Callable[[], None]], None] = _start_timer,
    ) -> None:
        self._core = core
        self._gate = gate
        self._settings = settings
        self._schedule = schedule
        self._states: dict[str, ReadyState] = {}
        self._unfenced: set[str] = set()
        """Nodes acted on while kcm had not yet fenced them: follow up when it does."""
        self._queue: queue.Queue[Work | None] = queue.Queue()
        self._action_lock = threading.Lock()
        self._closed = False
        self.counters = _Counters()

    # -- fed by the watcher thread -----------------------------------------------------

    def observe_list(self, nodes: Iterable[Any], reason: str) -> None:
        """A fresh node list (start or after the watch broke): remember it, reconcile."""
        fresh = {transitions.node_name(n): transitions.ready_state(n) for n in nodes}
        for name, after in sorted(fresh.items()):
            before = self._states.get(name)
            if before is not None and before != after:
                self._log_transition(name, before, after, acts=False, seen="relist")
        self._states = fresh
        if self._settings.behaviour.reconcile:
            self._queue.put(Reconcile(reason))

    def observe_event(self, event_type: str, node: Any) -> None:
        """One watch event; queues a Transition when it acts."""
        name = transitions.node_name(node)
        if event_type == "DELETED":
            self._states.pop(name, None)
            self._unfenced.discard(name)
            return
        after = transitions.ready_state(node)
        before = self._states.get(name)
        self._states[name] = after
        self._follow_up_if_fenced(name, after, node)
        if before is None or before == after:
            return
        flags = self._settings.behaviour
        acts = transitions.triggers_action(
            before, after, on_unknown=flags.act_on_unknown, on_recovery=flags.act_on_recovery)
        self._log_transition(name, before, after, acts=acts, seen="watch")
        if acts:
            self._queue.put(Transition(name, before, after))
            if not transitions.is_fenced(node):
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

    # -- the worker --------------------------------------------------------------------

    def run_worker(self) -> None:
        """Process queued work until ``stop``."""
        while (item := self._queue.get()) is not None:
            self.process(item)

    def process_pending(self) -> int:
        """Process what is queued now, in this thread; the number of items (for tests)."""
        count = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return count
            if item is None:
                return count
            self.process(item)
            count += 1

    def stop(self) -> None:
        """No new deletes; returns once an in-flight delete has finished."""
        self._closed = True
        self._queue.put(None)
        with self._action_lock:
            pass

    def process(self, item: Work) -> None:
        """Do one piece of work; failures are retried after ``retry_delay_s``."""
        if self._closed:
            return
        if isinstance(item, Transition):
            if self._states.get(item.node) != item.after:
                self._emit(logging.INFO, "transition-superseded", node=item.node,
                           expected=item.after.value)
                return
            ok = self._act_on_node(item.node, cause="transition")
        elif isinstance(item, FollowUp):
            ok = self._follow_up(item)
        else:
            ok = self._reconcile(item.reason)
        if not ok:
            retry: Work = item if not isinstance(item, Reconcile) else Reconcile("retry")
            self._schedule(self._settings.retry_delay_s, lambda: self._queue.put(retry))

    # -- internals ---------------------------------------------------------------------

    def _follow_up(self, item: FollowUp) -> bool:
        state = self._states.get(item.node)
        if state is None or not transitions.is_not_ready(state):
            return True
        ok = self._act_on_node(item.node, cause="fenced" if item.again else "fenced-again")
        if ok and item.again:
            again = FollowUp(item.node, again=False)
            self._schedule(self._settings.retry_delay_s, lambda: self._queue.put(again))
        return ok

    def _reconcile(self, reason: str) -> bool:
        if self._gate.current() is None:
            self._emit(logging.INFO, "reconcile-skipped", reason=reason, why="not-leader")
            return True
        try:
            nodes = self._core.list_node(_request_timeout=self._settings.request_timeout_s).items
        except leader.TRANSIENT_ERRORS as exc:
            self._emit(logging.ERROR, "reconcile-failed", reason=reason, error=str(exc))
            return False
        not_ready = sorted(
            transitions.node_name(n) for n in nodes or ()
            if transitions.is_not_ready(transitions.ready_state(n)))
        self._emit(logging.INFO, "reconcile", reason=reason, not_ready_nodes=not_ready)
        results = [self._act_on_node(name, cause=f"reconcile:{reason}") for name in not_ready]
        return all(results)

    def _act_on_node(self, node: str, *, cause: str) -> bool:
        if self._gate.current() is None:
            self.counters.skipped_not_leader += 1
            self._emit(logging.INFO, "node-skipped", node=node, cause=cause, why="not-leader")
            return True
        try:
            candidates = self._list_pods(node)
        except leader.TRANSIENT_ERRORS as exc:
            self._emit(logging.ERROR, "pod-list-failed", node=node, cause=cause, error=str(exc))
            return False
        use_selector = self._settings.behaviour.use_selector
        chosen = transitions.pods_to_delete(
            candidates, node=node, namespaces=self._settings.namespaces,
            selector=self._settings.selector if use_selector else None)
        results = [self._delete(pod, node=node, cause=cause) for pod in chosen]
        return all(results)

    def _list_pods(self, node: str) -> list[transitions.PodRef]:
        kwargs: dict[str, Any] = {
            "field_selector": f"spec.nodeName={node}",
            "_request_timeout": self._settings.request_timeout_s,
        }
        selector = self._settings.selector
        if self._settings.behaviour.use_selector and not selector.is_empty:
            kwargs["label_selector"] = selector.to_query()
        if self._settings.namespaces is None:
            items = list(self._core.list_pod_for_all_namespaces(**kwargs).items or ())
        else:
            items = []
            for namespace in sorted(self._settings.namespaces):
                items += self._core.list_namespaced_pod(namespace, **kwargs).items or ()
        return [transitions.pod_ref(p) for p in items]

    def _delete(self, pod: transitions.PodRef, *, node: str, cause: str) -> bool:
        """Force-delete ``pod`` if still leader; False only when it should be retried."""
        grace = self._settings.behaviour.grace_period_seconds
        with self._action_lock:
            if self._closed:
                return True
            lead = self._gate.current()
            if lead is None:
                self.counters.skipped_not_leader += 1
                self._emit(logging.INFO, "pod-delete-skipped", node=node,
                           namespace=pod.namespace, pod=pod.name, cause=cause, why="not-leader")
                return True
            kwargs: dict[str, Any] = {"_request_timeout": self._settings.request_timeout_s}
            if grace is not None:
                kwargs["grace_period_seconds"] = grace
            body = client.V1DeleteOptions(
                grace_period_seconds=grace,
                preconditions=client.V1Preconditions(uid=pod.uid) if pod.uid else None)
            try:
                self._core.delete_namespaced_pod(pod.name, pod.namespace, body=body, **kwargs)
                result = "deleted"
            except ApiException as exc:
                if exc.status == 404:
                    result = "not-found"
                elif exc.status == 409:
                    result = "replaced"  # uid precondition: a new pod owns the name
                else:
                    return self._delete_failed(pod, node, cause, lead, exc)
            except leader.TRANSIENT_ERRORS as exc:
                return self._delete_failed(pod, node, cause, lead, exc)
        if result == "deleted":
            self.counters.deleted += 1
        self.counters.by_result[result] = self.counters.by_result.get(result, 0) + 1
        self._emit(logging.INFO, "pod-delete", lead, node=node, namespace=pod.namespace,
                   pod=pod.name, uid=pod.uid, result=result, cause=cause,
                   grace_period_seconds=grace)
        return True

    def _delete_failed(self, pod: transitions.PodRef, node: str, cause: str,
                       lead: leader.Leadership, exc: BaseException) -> bool:
        self.counters.failed += 1
        self._emit(logging.ERROR, "pod-delete-failed", lead, node=node, namespace=pod.namespace,
                   pod=pod.name, uid=pod.uid, cause=cause, error=str(exc).strip())
        return False

    def _log_transition(self, node: str, before: ReadyState, after: ReadyState, *,
                        acts: bool, seen: str) -> None:
        self._emit(logging.INFO, "node-transition", node=node, before=before.value,
                   after=after.value, acts=acts, seen=seen)

    def _emit(self, level: int, event: str, lead: leader.Leadership | None = None,
              /, **fields: object) -> None:
        """Every line names the acting identity, fencing token and variant."""
        if lead is None:
            lead = self._gate.current()
        jsonlog.emit(
            log, level, event,
            identity=lead.identity if lead else self._settings.identity,
            lease_transitions=lead.lease_transitions if lead else None,
            leader=lead is not None, variant=self._settings.variant.name, **fields)
