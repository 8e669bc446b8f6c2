#!/usr/bin/env python3
"""An HA controller written from outside zoneproof: the suite's proof that it certifies a
controller it has never seen.

Written from conformance/ha_controller/README.md (the contract C1-C7) and the seeds, not from
zoneproof's reference: it imports nothing of zoneproof. Its machinery is the kubernetes
client's own: ``kubernetes.leaderelection`` (LeaderElection + LeaseLock) for the Lease,
``kubernetes.watch`` for an informer-style node cache, a work queue and one worker.

What the stock ``kubernetes.leaderelection`` lacks, and what this file adds around it:

* no release: a clean shutdown (SIGTERM/SIGINT) writes the Lease free itself (holder
  cleared, leaseDurationSeconds 1), as client-go's ReleaseOnCancel does, and the lock
  refuses any later write so the renew loop cannot take the Lease back;
* no renew deadline for the work it guards: the renew loop notices a lost Lease only after
  its own retries, and nothing stops the callback's thread meanwhile (e.g. a leader resumed
  from SIGSTOP). Here the lock notes when it *sent* each of its successful writes (a
  monotonic clock that runs on while the process is stopped); every delete is refused
  unless that is less than renewDeadline ago, and a watchdog exits non-zero once it is not;
* the leading callback runs on a daemon thread and ``run()`` returns on loss: both end the
  process with exit code 1 (the process must not linger as a non-leader that once led);
* no jitter between attempts (a plain sleep of retryPeriod): take-overs are never slower
  than client-go's, so the suite's jittered limits hold;
* ``Config`` refuses retryPeriod < 1 s and a renewDeadline <= 1.2 x retryPeriod.

Behaviour (the contract's rows): on becoming leader, every node whose Ready condition is
not True is acted on once (C5); after that only transitions Ready True -> False/Unknown
(C1, C3). Acting = force-delete (grace 0, uid precondition) the pods bound to that node
that match the selector in each watched namespace (C2), listed fresh from the API server.
If the node had no NoSchedule not-ready/unreachable taint yet when it was acted on, it is
acted on once more when the taint lands (C4). Exit 1 on Lease loss, 0 after a release (C6).
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

log = logging.getLogger("outside-controller")

FENCE_KEYS = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})


def exit_now(code: int, why: str) -> None:
    """End the process at once (from any thread), saying why."""
    log.warning("exiting %d: %s", code, why)
    logging.shutdown()
    os._exit(code)


# --- the Lease ------------------------------------------------------------------------------

class ReleasableLeaseLock(LeaseLock):
    """The client's LeaseLock, plus: when each successful write of ours was sent, and a release
    after which it writes nothing more."""

    def __init__(self, name: str, namespace: str, identity: str) -> None:
        super().__init__(name, namespace, identity)
        self.mutex = threading.Lock()
        self.closed = False
        self.last_write_sent: float | None = None  # time.monotonic() when sent

    def _guarded(self, write, record) -> bool:  # type: ignore[no-untyped-def]
        with self.mutex:
            if self.closed:
                return False
            sent = time.monotonic()
            ok = bool(write())
            if ok and record.holder_identity == self.identity:
                self.last_write_sent = sent
            return ok

    def create(self, name, namespace, election_record):  # type: ignore[no-untyped-def]
        return self._guarded(lambda: super(ReleasableLeaseLock, self).create(
            name, namespace, election_record), election_record)

    def update(self, name, namespace, updated_record):  # type: ignore[no-untyped-def]
        return self._guarded(lambda: super(ReleasableLeaseLock, self).update(
            name, namespace, updated_record), updated_record)

    def release(self) -> None:
        """Write the Lease free if we hold it; no write of ours follows."""
        with self.mutex:
            self.closed = True
            for _ in range(3):
                try:
                    lease = self.api_instance.read_namespaced_lease(self.name, self.namespace)
                    if (lease.spec.holder_identity or "") != self.identity:
                        return
                    now = datetime.datetime.now(datetime.UTC)
                    lease.spec.holder_identity = None
                    lease.spec.lease_duration_seconds = 1
                    lease.spec.acquire_time = now
                    lease.spec.renew_time = now
                    self.api_instance.replace_namespaced_lease(self.name, self.namespace, lease)
                    log.info("released Lease %s/%s", self.namespace, self.name)
                    return
                except ApiException as exc:
                    log.warning("release failed (%s), retrying", exc.status)


# --- the node cache -------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeState:
    ready: str  # the Ready condition's status: True, False or Unknown
    fenced: bool  # kcm's NoSchedule not-ready/unreachable taint is on


def node_state(node: client.V1Node) -> NodeState:
    ready = "Unknown"
    for condition in (node.status.conditions or []) if node.status else []:
        if condition.type == "Ready":
            ready = condition.status
    taints = (node.spec.taints or []) if node.spec else []
    fenced = any(t.effect == "NoSchedule" and t.key in FENCE_KEYS for t in taints)
    return NodeState(ready, fenced)


class NodeInformer:
    """List, then watch nodes; keep each one's state; call on_change(name, old, new) for every
    change (a relist after a broken watch reports what changed meanwhile)."""

    def __init__(self, core: client.CoreV1Api, on_change) -> None:  # type: ignore[no-untyped-def]
        self.core, self.on_change = core, on_change
        self.states: dict[str, NodeState] = {}
        self.lock = threading.Lock()
        self.synced = threading.Event()

    def snapshot(self) -> dict[str, NodeState]:
        with self.lock:
            return dict(self.states)

    def _apply(self, name: str, new: NodeState | None) -> None:
        with self.lock:
            old = self.states.get(name)
            if new is None:
                self.states.pop(name, None)
            else:
                self.states[name] = new
        if old is not None and new is not None and old != new:
            self.on_change(name, old, new)

    def _relist(self) -> str:
        listed = self.core.list_node(_request_timeout=30)
        seen = {n.metadata.name: node_state(n) for n in listed.items}
        for name in set(self.snapshot()) - set(seen):
            self._apply(name, None)
        for name, state in seen.items():
            self._apply(name, state)
        self.synced.set()
        return str(listed.metadata.resource_version)

    def run(self) -> None:
        while True:
            try:
                version = self._relist()
                stream = watch.Watch().stream(self.core.list_node, resource_version=version,
                                              timeout_seconds=300, allow_watch_bookmarks=True,
                                              _request_timeout=330)
                for event in stream:
                    kind = event["type"]
                    if kind == "ERROR":
                        break  # e.g. 410 Gone: relist
                    if kind == "BOOKMARK":
                        continue
                    node = event["object"]
                    self._apply(node.metadata.name, None if kind == "DELETED" else node_state(node))
            except Exception as exc:  # an informer relists whatever broke
                log.warning("node watch broke (%s); relisting", exc)
                time.sleep(0.5)


# --- the controller -------------------------------------------------------------------------

class Controller:
    def __init__(self, core: client.CoreV1Api, lock: ReleasableLeaseLock, *, namespaces: list[str],
                 selector: str, renew_deadline: float) -> None:
        self.core, self.lock = core, lock
        self.namespaces, self.selector, self.renew_deadline = namespaces, selector, renew_deadline
        self.leading = threading.Event()
        self.stopping = threading.Event()
        self.queue: queue.Queue[tuple[str, str]] = queue.Queue()
        self.awaiting_fence: set[str] = set()
        self.fence_lock = threading.Lock()
        self.informer = NodeInformer(core, self.on_change)

    # the Lease's authority
    def holds_lease(self) -> bool:
        sent = self.lock.last_write_sent
        return (self.leading.is_set() and not self.stopping.is_set() and sent is not None
                and time.monotonic() - sent < self.renew_deadline)

    def watchdog(self) -> None:
        while True:
            time.sleep(0.1)
            if self.leading.is_set() and not self.stopping.is_set() and not self.holds_lease():
                exit_now(1, f"Lease not renewed within renewDeadline {self.renew_deadline:g}s")

    # events
    def on_change(self, name: str, old: NodeState, new: NodeState) -> None:
        if new.ready == "True":
            with self.fence_lock:
                self.awaiting_fence.discard(name)
        if not self.leading.is_set():
            return
        if old.ready == "True" and new.ready != "True":
            self.queue.put((name, f"Ready True -> {new.ready}"))
        elif new.fenced and not old.fenced and new.ready != "True":
            with self.fence_lock:
                follow_up = name in self.awaiting_fence
                self.awaiting_fence.discard(name)
            if follow_up:
                self.queue.put((name, "fenced after we acted"))

    def on_started_leading(self) -> None:
        self.informer.synced.wait()
        self.leading.set()
        log.info("leading: reconciling the current state")
        for name, state in sorted(self.informer.snapshot().items()):
            if state.ready != "True":
                self.queue.put((name, f"Ready {state.ready} on becoming leader"))

    # work
    def worker(self) -> None:
        while True:
            name, why = self.queue.get()
            try:
                self.act(name, why)
            except Exception:  # one node's failure must not stop the worker
                log.exception("acting on %s failed", name)

    def act(self, name: str, why: str) -> None:
        if not self.holds_lease():
            log.info("not acting on %s (%s): not holding the Lease", name, why)
            return
        state = self.informer.snapshot().get(name)
        if state is not None and state.ready == "True":
            log.info("not acting on %s (%s): Ready again", name, why)
            return
        if state is not None and not state.fenced:
            with self.fence_lock:
                self.awaiting_fence.add(name)
        log.info("acting on %s: %s", name, why)
        for namespace in self.namespaces:
            pods = self.core.list_namespaced_pod(namespace, label_selector=self.selector,
                                                 field_selector=f"spec.nodeName={name}",
                                                 _request_timeout=10)
            for pod in pods.items:
                self.force_delete(pod)

    def force_delete(self, pod: client.V1Pod) -> None:
        where = f"{pod.metadata.namespace}/{pod.metadata.name}"
        for attempt in range(3):
            if not self.holds_lease():
                log.info("not deleting %s: not holding the Lease", where)
                return
            try:
                self.core.delete_namespaced_pod(
                    pod.metadata.name, pod.metadata.namespace, _request_timeout=10,
                    body=client.V1DeleteOptions(grace_period_seconds=0, preconditions=
                                                client.V1Preconditions(uid=pod.metadata.uid)))
                log.info("force-deleted %s from %s", where, pod.spec.node_name)
                return
            except ApiException as exc:
                if exc.status in (404, 409):
                    return  # gone already, or a new pod of that name
                log.warning("deleting %s: %s (attempt %d)", where, exc.status, attempt + 1)
            except Exception as exc:  # connection trouble: retry
                log.warning("deleting %s: %s (attempt %d)", where, exc, attempt + 1)
            time.sleep(0.2)

    # shutdown
    def shutdown(self, signum: int, _frame: object) -> None:
        self.stopping.set()
        self.leading.clear()
        log.info("signal %d: releasing the Lease", signum)
        self.lock.release()
        exit_now(0, "clean shutdown")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--identity", required=True)
    parser.add_argument("--namespaces", required=True, help="comma-separated")
    parser.add_argument("--selector", default="app=noobaa")
    parser.add_argument("--lease-namespace", default="default")
    parser.add_argument("--lease-name", default="outside-ha-controller")
    parser.add_argument("--lease-duration", type=float, default=15)
    parser.add_argument("--renew-deadline", type=float, default=10)
    parser.add_argument("--retry-period", type=float, default=2)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s {args.identity} %(threadName)s %(message)s")
    logging.getLogger("leaderelection").setLevel(logging.WARNING)
    namespaces = [n.strip() for n in args.namespaces.split(",") if n.strip()]
    if not namespaces:
        parser.error("--namespaces: name at least one namespace")

    config.load_kube_config(config_file=args.kubeconfig)  # the default client of LeaseLock too
    core = client.CoreV1Api()
    lock = ReleasableLeaseLock(args.lease_name, args.lease_namespace, args.identity)
    controller = Controller(core, lock, namespaces=namespaces, selector=args.selector,
                            renew_deadline=args.renew_deadline)
    signal.signal(signal.SIGTERM, controller.shutdown)
    signal.signal(signal.SIGINT, controller.shutdown)
    election = leaderelection.LeaderElection(electionconfig.Config(
        lock, lease_duration=int(args.lease_duration), renew_deadline=args.renew_deadline,
        retry_period=args.retry_period, onstarted_leading=controller.on_started_leading,
        onstopped_leading=lambda: exit_now(1, "lost the Lease")))

    def elect() -> None:
        election.run()
        exit_now(1, "leader election ended")

    for target, name in ((controller.informer.run, "informer"), (controller.worker, "worker"),
                         (controller.watchdog, "watchdog"), (elect, "election")):
        threading.Thread(target=target, name=name, daemon=True).start()
    log.info("started: namespaces %s, selector %s, Lease %s/%s", namespaces, args.selector,
             args.lease_namespace, args.lease_name)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
