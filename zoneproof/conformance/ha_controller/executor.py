"""Runs a schedule on a live bed, fast, and reads back what the API server recorded.

Fast because nothing waits for a kubelet: the schedule's nodes are Node objects no kwok
manages, the executor writes their status through the status subresource (Ready flips,
fences and cordons at once), and its pods are bound by ``spec.nodeName`` with their phase
written the same way. kube-controller-manager is stopped while schedules run
(``ModelBed``), so nothing but the schedule and the controller under test changes them;
the executor plays the node-lifecycle controller's part itself (its fence is an event).

Every write the executor makes is audited with the object it left (its identity is in
``audit_policy.MODEL_EXECUTOR_GROUP``), and so are the replicas' Lease writes and
everyone's pod deletes: ``history.from_records`` rebuilds the schedule's history from the
audit log alone. Process events are marker writes (a ConfigMap annotation): before a
replica starts or is signalled, after it was seen to exit.

Several schedules run side by side on one bed, each in a ``Slot`` (its own replica
identities) with its own nodes, namespaces and Lease.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import daemons, kube
from zoneproof.cluster import audit_policy, facets
from zoneproof.cluster.interface import WORKLOAD_IMAGE, Capability, Cluster, ControlPlaneProcess
from zoneproof.components.harness.controller import ControllerReplicas, ControllerSettings
from zoneproof.conformance.ha_controller import history, labels, model
from zoneproof.conformance.ha_controller.history import MARKER_ANNOTATION, History, Scope
from zoneproof.conformance.ha_controller.schedule import Event, PodSpec, Schedule
from zoneproof.measure.audit import read_records
from zoneproof.runs import sweep

__all__ = ["EXECUTOR", "ModelBed", "Outcome", "Slot", "model_setup", "run"]

log = logging.getLogger(__name__)

EXECUTOR = "zp-model-executor"
_BINDING = "zoneproof-model-executor"
_MARKER = "zpm-marker"
_ZONE = "topology.kubernetes.io/zone"
_INTRUDER = "zp-intruder"
_DEAD_LEADER = "zp-dead-leader"
#: After the last event, how long the record is kept going at least (a wrong controller
#: acts in milliseconds; the conformance suite's STAY_S).
QUIET_S = 3.0
_TICK_S = 1.0
_POLL_S = 0.05
_TERMINATING_GRACE_S = 3600
#: How long a signal to "the leader" waits for one (beyond a lease duration): replicas
#: take seconds to start and elect.
_LEADER_WAIT_S = 15.0


@dataclass
class Slot:
    """Replica identities of their own (``zp-hac-m<i>-0``, ``-1``) for one schedule at a time."""

    index: int
    replicas: ControllerReplicas

    @property
    def prefix(self) -> str:
        """What each of its identities starts with (``-`` included: m1 is not m10)."""
        return f"{self.replicas.prefix}-"

    @property
    def identities(self) -> list[str]:
        """Its replicas' identities."""
        return list(self.replicas.identities)


class ModelBed:
    """A bed prepared for generated schedules: the executor's identity, the replica slots
    (their credentials issued), kube-controller-manager stopped; ``close`` undoes it."""

    def __init__(self, cluster: Cluster, settings: ControllerSettings, workdir: Path, *,
                 slots: int) -> None:
        if Capability.CONTROL_PLANE not in cluster.capabilities:
            raise errors.ConfigError(
                f"the generated controller schedules flip node conditions themselves and need "
                f"kube-controller-manager stopped meanwhile; the {cluster.backend} backend "
                "cannot stop it (run them on a local bed)")
        self.cluster, self.settings, self.workdir = cluster, settings, workdir
        self.api = kube.api_client(cluster.kubeconfig)
        self.kubeconfig = workdir / "executor.kubeconfig"
        self.slots: list[Slot] = []
        self._count = slots
        self._control = facets.facet(cluster, Capability.CONTROL_PLANE)

    def open(self) -> ModelBed:
        """Issue the identities (kcm signs them), then stop kcm."""
        rbac = client.RbacAuthorizationV1Api(self.api)
        with contextlib.suppress(client.ApiException):
            rbac.create_cluster_role_binding(sweep.labelled({
                "metadata": {"name": _BINDING},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": "cluster-admin"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                              "name": audit_policy.MODEL_EXECUTOR_GROUP}]}))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.cluster.client_kubeconfig(EXECUTOR, (audit_policy.MODEL_EXECUTOR_GROUP,),
                                       self.kubeconfig)
        for index in range(self._count):
            replicas = ControllerReplicas(self.cluster, self.settings,
                                          self.workdir / f"slot-{index}", replicas=2,
                                          prefix=f"zp-hac-m{index}")
            for identity in replicas.identities:
                replicas.kubeconfig(identity)
            self.slots.append(Slot(index, replicas))
        self._control.kill_component(ControlPlaneProcess.CONTROLLER_MANAGER)
        return self

    def close(self) -> None:
        """Stop every replica, start kcm again."""
        for slot in self.slots:
            slot.replicas.stop_all()
        if not self._control.component_running(ControlPlaneProcess.CONTROLLER_MANAGER):
            self._control.restart_component(ControlPlaneProcess.CONTROLLER_MANAGER)
        self.api.close()

    def audit_log(self) -> Path:
        """The bed's audit log."""
        found = self.cluster.audit_log()
        if found is None:
            raise errors.ConfigError("the generated controller schedules need the API "
                                     "server's audit log")
        return found


@dataclass
class Outcome:
    """One schedule run: its history, the model's verdict, how long it took."""

    schedule: Schedule
    history: History
    verdict: model.Verdict
    seconds: float
    skipped: list[str] = field(default_factory=list)
    """Events that could not take effect (no leader to signal, a pod already gone...)."""
    slot: int = 0


def model_setup(settings: ControllerSettings, namespaces: tuple[str, ...],
                replicas: tuple[str, ...], *, reaction_s: float) -> model.Setup:
    """What the model is told of a run: the controller's settings, the suite's bound."""
    return model.Setup(namespaces, settings.selector, replicas,
                       lease_duration_s=settings.lease_duration_s,
                       renew_deadline_s=settings.renew_deadline_s,
                       retry_period_s=settings.retry_period_s, reaction_s=reaction_s)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Run:
    """The state of one schedule being executed."""

    def __init__(self, schedule: Schedule, bed: ModelBed, slot: Slot, *,
                 settings: ControllerSettings, selector: labels.Selector,
                 reaction_s: float) -> None:
        self.schedule, self.bed, self.slot = schedule, bed, slot
        self.sid = uuid.uuid4().hex[:6]
        self.api = kube.api_client(bed.kubeconfig, pool_maxsize=4)
        self.core = client.CoreV1Api(self.api)
        self.coordination = client.CoordinationV1Api(self.api)
        self.namespaces = {"w1": f"zpm-{self.sid}-w1", "w2": f"zpm-{self.sid}-w2",
                           "u": f"zpm-{self.sid}-u"}
        watched = [self.namespaces[n] for n in ("w1", "w2")[:schedule.watched]]
        self.settings = replace(settings.with_namespaces(*watched),
                                lease_name=f"zpm-{self.sid}")
        self.nodes = [f"zpm-{self.sid}-{i}" for i in range(len(schedule.nodes))]
        self.selector = selector
        self.setup = model_setup(settings, tuple(watched), tuple(slot.identities),
                                 reaction_s=reaction_s)
        self.scope = Scope(frozenset(self.nodes), frozenset(self.namespaces.values()),
                           self.settings.lease_namespace, self.settings.lease_name,
                           slot.prefix, EXECUTOR, f"{self.namespaces['w1']}/{_MARKER}")
        self.taints: dict[int, set[str]] = {i: set() for i in range(len(self.nodes))}
        self.pods: dict[str, PodSpec] = {p.name: p for p in schedule.pods}
        self.frozen: set[str] = set()
        self.killed: set[str] = set()
        """Replicas SIGKILLed whose exit the monitor has not seen yet (not running)."""
        self.skipped: list[str] = []
        self.seq = 0
        self.marker_lock = threading.Lock()
        self.records: list[Any] = []
        self.offset = 0
        self.stop_monitor = threading.Event()
        self.incarnations = threading.Lock()
        """Held while a replica's exit or start is marked: an incarnation's exit is marked
        before the next one's start (else the model reads the new one as gone)."""
        self.exits_marked: dict[str, int] = {}
        """The pid of each replica's incarnation whose exit is marked (or that was gone
        before this schedule began: none of its business)."""

    # -- markers and the record ------------------------------------------------------------

    def mark(self, text: str) -> None:
        """A marker write: the process event ``text`` gets a place in the API server's order."""
        with self.marker_lock:
            self.seq += 1
            self.core.patch_namespaced_config_map(_MARKER, self.namespaces["w1"], {
                "metadata": {"annotations": {MARKER_ANNOTATION: text,
                                             "zoneproof.dev/seq": str(self.seq)}}})

    def read(self) -> History:
        """The schedule's history so far."""
        found, self.offset = read_records(self.bed.audit_log(), offset=self.offset)
        self.records += [r for r in found if _maybe_in(r, self.scope)]
        return history.from_records(self.records, self.scope)

    # -- setup -----------------------------------------------------------------------------

    def prepare(self) -> None:
        self.offset = self.bed.audit_log().stat().st_size
        for key, name in self.namespaces.items():
            self.core.create_namespace(sweep.labelled({"metadata": {"name": name}}))
            # kcm (its ServiceAccount controller) is stopped: the executor makes the default
            self.core.create_namespaced_service_account(name, {"metadata": {"name": "default"}})
            if key == "w1":
                self.core.create_namespaced_config_map(name, {"metadata": {"name": _MARKER}})
        for index, spec in enumerate(self.schedule.nodes):
            self.create_node(index, "True" if spec.reported else "")
        if self.schedule.dead_leader:
            self.write_lease(_DEAD_LEADER)
        for pod in self.schedule.pods:
            self.create_pod(pod)
        self.slot.replicas.settings = self.settings

    def create_node(self, index: int, status: str) -> None:
        """Node ``index`` made, with Ready ``status`` posted (none if '')."""
        self.core.create_node({"metadata": {"name": self.nodes[index], "labels": {
            _ZONE: f"zpm-{self.schedule.nodes[index].zone}",
            "kubernetes.io/hostname": self.nodes[index], **sweep.labels()}}})
        if status:
            self.ready(index, status)

    def renode(self, index: int, status: str) -> None:
        """Node ``index`` deleted (no finalizer keeps it; its pods stay bound to its name:
        kcm's pod GC is not running) and made again, new, under its name."""
        self.core.delete_node(self.nodes[index])
        self.taints[index] = set()
        self.create_node(index, status)

    def write_lease(self, holder: str, current: Any = None) -> None:
        now = _now()
        body: dict[str, Any] = {
            "metadata": {"name": self.settings.lease_name},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds":
                     self.settings.lease_duration_s, "acquireTime": now, "renewTime": now,
                     "leaseTransitions": 1}}
        if current is None:
            self.coordination.create_namespaced_lease(self.settings.lease_namespace, body)
            return
        body["metadata"]["resourceVersion"] = current.metadata.resource_version
        body["spec"]["leaseTransitions"] = (current.spec.lease_transitions or 0) + 1
        self.coordination.replace_namespaced_lease(self.settings.lease_name,
                                                   self.settings.lease_namespace, body)

    # -- events ----------------------------------------------------------------------------

    def ready(self, node: int, status: str) -> None:
        reason = {"True": "KubeletReady", "False": "KubeletNotReady",
                  "Unknown": "NodeStatusUnknown"}[status]
        now = _now()
        self.core.patch_node_status(self.nodes[node], {"status": {"conditions": [{
            "type": "Ready", "status": status, "reason": reason, "message": "zoneproof model",
            "lastHeartbeatTime": now, "lastTransitionTime": now}]}})

    def set_taint(self, node: int, taint: str, on: bool) -> None:
        (self.taints[node].add if on else self.taints[node].discard)(taint)
        taints = [{"key": t.split(":")[0], "effect": t.split(":")[1]}
                  for t in sorted(self.taints[node])]
        self.core.patch_node(self.nodes[node], {"spec": {"taints": taints or None}})

    def labels_of(self, pod: PodSpec) -> dict[str, str]:
        if pod.labels < 0:
            matching = self.selector.matching()
            return matching[(-1 - pod.labels) % len(matching)]
        misses = self.selector.misses()
        return misses[pod.labels % len(misses)] if misses else {"zoneproof.dev/miss": "x"}

    def create_pod(self, pod: PodSpec, node: int | None = None) -> None:
        namespace = self.namespaces[pod.namespace]
        self.core.create_namespaced_pod(namespace, {
            "metadata": {"name": pod.name, "labels": self.labels_of(pod)},
            "spec": {"nodeName": self.nodes[pod.node if node is None else node],
                     "containers": [{"name": "c", "image": WORKLOAD_IMAGE}]}})
        if pod.phase != "Pending":
            self.phase(pod.name, pod.phase)
        if pod.terminating:
            self.terminate(pod.name)

    def phase(self, name: str, phase: str) -> None:
        pod = self.pods[name]
        conditions = [{"type": "Ready", "status": "True" if phase == "Running" else "False"}]
        self.core.patch_namespaced_pod_status(name, self.namespaces[pod.namespace], {
            "status": {"phase": phase, "conditions": conditions}})

    def terminate(self, name: str) -> None:
        pod = self.pods[name]
        self.core.delete_namespaced_pod(name, self.namespaces[pod.namespace],
                                        grace_period_seconds=_TERMINATING_GRACE_S)

    def resolve(self, target: str) -> str | None:
        """The identity a target names now (None: nobody fits): a replica by index; the
        ``leader`` (waited for: the replicas may still be starting), a ``standby`` (running,
        not holding), a ``frozen`` one, a ``dead`` one (not running)."""
        replicas, identities = self.slot.replicas, self.slot.identities
        if target.isdigit():
            return identities[int(target)] if int(target) < len(identities) else None
        if target == "frozen":
            return next((i for i in identities if i in self.frozen), None)
        if target == "dead":
            return next((i for i in identities if not replicas.alive(i)), None)
        deadline = time.monotonic() + (self.settings.lease_duration_s + _LEADER_WAIT_S
                                       if target == "leader" else 0)
        while True:
            holder = replicas.holder()
            running = [i for i in identities if replicas.alive(i)
                       and i not in self.frozen and i not in self.killed]
            found = (holder if holder in running else None) if target == "leader" else next(
                (i for i in running if i != holder), None)
            if found is not None or not running or time.monotonic() >= deadline:
                return found
            time.sleep(0.2)

    def apply(self, event: Event) -> None:
        """Carry out ``event``; what cannot take effect is noted in ``skipped``."""
        try:
            self._apply(event)
        except client.ApiException as exc:
            if exc.status not in (404, 409):
                raise
            self.skipped.append(f"{event.describe()}: HTTP {exc.status}")

    def _apply(self, event: Event) -> None:
        handlers: dict[str, Callable[[Event], object]] = {
            "wait": lambda e: time.sleep(e.seconds),
            "ready": lambda e: self.ready(e.node, e.status),
            "fence": lambda e: self.set_taint(e.node, f"node.kubernetes.io/{e.key}:NoSchedule",
                                              e.on),
            "taint": lambda e: self.set_taint(e.node, "zoneproof.dev/maintenance:NoSchedule",
                                              e.on),
            "cordon": lambda e: self.core.patch_node(self.nodes[e.node],
                                                     {"spec": {"unschedulable": e.on}}),
            "pod": self.bind,
            "phase": lambda e: self.phase(e.name, e.phase),
            "terminate": lambda e: self.terminate(e.name),
            "recreate": lambda e: self.create_pod(
                replace(self.pods[e.name], phase="Running", terminating=False), node=e.node),
            "renode": lambda e: self.renode(e.node, e.status),
            "start": self.start,
            "signal": self.signal,
            "intrude": lambda e: self.intrude(),
            "leader": self.await_leader,
        }
        handlers[event.kind](event)

    def bind(self, event: Event) -> None:
        assert event.pod is not None
        self.pods[event.pod.name] = event.pod
        self.create_pod(event.pod)

    def await_leader(self, event: Event) -> None:
        if self.resolve("leader") is None:
            self.skipped.append(f"{event.describe()}: none did")

    def start(self, event: Event) -> None:
        identity = self.resolve(event.target)
        if identity is None or self.slot.replicas.alive(identity):
            self.skipped.append(f"{event.describe()}: "
                                f"{'none stopped' if identity is None else 'already running'}")
            return
        with self.incarnations:
            self.mark_exit(identity)
            self.mark(f"start {identity}")
            self.killed.discard(identity)
            self.slot.replicas.start(identity)

    def signal(self, event: Event) -> None:
        identity = self.resolve(event.target)
        sig = signal.Signals[event.signal]
        frozen = identity in self.frozen
        if identity is None or not self.slot.replicas.alive(identity) \
                or identity in self.killed or frozen != (sig is signal.SIGCONT):
            self.skipped.append(f"{event.describe()}: no such replica"
                                + ("" if identity is None else f" ({identity}, "
                                   f"{'frozen' if frozen else 'running'})"))
            return
        self.mark(f"{sig.name.lower()} {identity}")
        self.slot.replicas.signal(identity, sig)
        (self.frozen.add if sig is signal.SIGSTOP else self.frozen.discard)(identity)
        if sig is signal.SIGKILL:
            self.killed.add(identity)

    def intrude(self) -> None:
        """An outsider takes the Lease once its holder left it unrenewed past its duration
        (never before: that would make a correct holder act without the Lease)."""
        holder = self.slot.replicas.holder()
        if self.slot.replicas.alive(holder) and holder not in self.frozen:
            self.skipped.append(f"intrude: the holder {holder} runs (it renews the Lease)")
            return
        deadline = time.monotonic() + self.settings.lease_duration_s + 3
        while time.monotonic() < deadline:
            try:
                lease = self.coordination.read_namespaced_lease(
                    self.settings.lease_name, self.settings.lease_namespace)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
                self.skipped.append("intrude: no Lease yet")
                return
            renewed = lease.spec.renew_time
            duration = lease.spec.lease_duration_seconds or self.settings.lease_duration_s
            if renewed is not None and dt.datetime.now(dt.UTC) > renewed + dt.timedelta(
                    seconds=duration + 1):
                self.write_lease(_INTRUDER, lease)
                return
            time.sleep(0.2)
        self.skipped.append("intrude: the holder kept renewing the Lease")

    # -- processes -------------------------------------------------------------------------

    def mark_exit(self, identity: str) -> None:
        """Marker ``exited <identity> <code>`` once per incarnation, once it is gone (the
        caller holds ``incarnations``)."""
        record = self.slot.replicas.records.get(identity)
        if record is None or self.exits_marked.get(identity) == record.pid \
                or daemons.alive(record):
            return
        self.exits_marked[identity] = record.pid
        self.frozen.discard(identity)
        self.killed.discard(identity)
        code = daemons.exit_code(record, timeout_s=1)
        self.mark(f"exited {identity} {code if code is not None else ''}".strip())

    def monitor(self) -> None:
        """Mark each replica's exit once it is seen gone."""
        while not self.stop_monitor.wait(_POLL_S):
            with self.incarnations:
                for identity in list(self.slot.replicas.records):
                    self.mark_exit(identity)

    @contextlib.contextmanager
    def monitoring(self) -> Iterator[None]:
        self.exits_marked = {identity: record.pid for identity, record in
                             list(self.slot.replicas.records.items())
                             if not daemons.alive(record)}
        thread = threading.Thread(target=self.monitor, name=f"monitor-{self.sid}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            self.stop_monitor.set()
            thread.join(5)

    def settle(self, *, at_least_s: float, at_most_s: float) -> History:
        """Keep the record going (a tick marker a second) until nothing the model awaits is
        pending, at least ``at_least_s`` after a replica leads (when one runs), at most
        ``at_most_s``; the history then. (Replicas take seconds to start and elect: until
        one leads, what it must catch up on is not yet asked.)"""
        start = time.monotonic()
        led: float | None = None
        while True:
            time.sleep(_TICK_S)
            self.mark("tick -")
            found = self.read()
            now = time.monotonic()
            replicas = self.slot.replicas
            running = [i for i in self.slot.identities
                       if replicas.alive(i) and i not in self.frozen]
            if led is None and (not running or replicas.holder() in running):
                led = now
            verdict = model.check(found, self.setup)
            pending = [u for u in verdict.undecided if "record ends before" in u]
            if now - start >= at_most_s or (
                    led is not None and now - led >= at_least_s and not pending):
                return found

    def teardown(self) -> None:
        """Thaw the frozen (the model judges what they do: one whose Lease was taken must
        exit on its own, so it gets that long first), SIGTERM the rest, and wait for them to
        exit (SIGKILL after the exit bound)."""
        replicas = self.slot.replicas
        thawed = sorted(self.frozen)
        for identity in thawed:
            self.mark(f"sigcont {identity}")
            replicas.signal(identity, signal.SIGCONT)
        self.frozen.clear()
        holder = replicas.holder()
        lost = [i for i in thawed if i != holder]
        deadline = time.monotonic() + self.setup.exit_after_loss_s + 1
        while lost and time.monotonic() < deadline and any(replicas.alive(i) for i in lost):
            time.sleep(_POLL_S)
        for identity in self.slot.identities:
            if replicas.alive(identity):
                self.mark(f"sigterm {identity}")
                replicas.signal(identity, signal.SIGTERM)
        deadline = time.monotonic() + self.setup.exit_s + 1
        while time.monotonic() < deadline and any(replicas.alive(i) for i in replicas.records):
            time.sleep(_POLL_S)
        for identity, record in replicas.records.items():
            if daemons.alive(record):
                self.mark(f"sigkill {identity}")
                daemons.send(record, signal.SIGKILL)

    def cleanup(self) -> None:
        self.slot.replicas.stop_all()
        for name in self.nodes:
            with contextlib.suppress(client.ApiException):
                self.core.delete_node(name)
        self.api.close()


def _maybe_in(record: Any, scope: Scope) -> bool:
    """A cheap first cut of the records that may be in ``scope``."""
    return (record.namespace in scope.namespaces or record.name in scope.nodes
            or record.user.startswith(scope.replica_prefix)
            or (record.resource == "leases" and record.namespace == scope.lease_namespace))


def run(schedule: Schedule, bed: ModelBed, slot: Slot, settings: ControllerSettings, *,
        selector: labels.Selector, reaction_s: float = 10.0,
        progress: Callable[[str], None] = lambda _: None) -> Outcome:
    """Execute ``schedule`` with the replicas of ``slot``; the model's verdict on its record."""
    started = time.monotonic()
    execution = _Run(schedule, bed, slot, settings=settings, selector=selector,
                     reaction_s=reaction_s)
    try:
        execution.prepare()
        with execution.monitoring():
            for event in schedule.events:
                execution.apply(event)
            execution.settle(at_least_s=QUIET_S, at_most_s=QUIET_S + max(
                execution.setup.takeover_after_death_s, execution.setup.exit_after_loss_s,
                reaction_s) + 2)
            execution.teardown()
            execution.settle(at_least_s=0.0, at_most_s=max(
                execution.setup.exit_s, execution.setup.takeover_after_release_s) + 2)
        execution.mark("end -")
        found = execution.read()
    finally:
        execution.cleanup()
    notes = {"schedule": schedule.to_dict(), "setup": {
        "namespaces": list(execution.setup.namespaces), "selector": execution.setup.selector,
        "replicas": list(execution.setup.replicas), "reaction_s": reaction_s,
        "lease_duration_s": execution.setup.lease_duration_s,
        "renew_deadline_s": execution.setup.renew_deadline_s,
        "retry_period_s": execution.setup.retry_period_s}, "skipped": execution.skipped}
    found = replace(found, notes=notes)
    verdict = model.check(found, execution.setup)
    seconds = time.monotonic() - started
    progress(f"schedule {schedule.notes.get('index', '?')} (slot {slot.index}): "
             f"{'pass' if verdict.passed else 'FAIL'} in {seconds:.1f}s, "
             f"{verdict.required} required, {len(verdict.violations)} violation(s)")
    return Outcome(schedule, found, verdict, seconds, execution.skipped, slot.index)
