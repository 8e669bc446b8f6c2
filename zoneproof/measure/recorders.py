"""Recorders: threads that watch the API (or poll health) and append events to a Timeline.

Event kinds (stable names used by SLOs and plots):
``node_ready`` {status, zone} · ``node_schedulable`` {schedulable} · ``pod_created`` /
``pod_scheduled`` / ``pod_ready`` / ``pod_deleting`` / ``pod_deleted`` {uid, node} ·
``lease_holder`` {holder, duration_s, transitions} · ``lease_renewed`` {holder, duration_s,
transitions} · ``node_heartbeat`` {} (a kubelet renewed its node Lease) · ``apiserver_ready``
{ready} · ``etcd_member`` {healthy} · ``etcd_leader`` {leader} · ``process_alive`` {alive}
(kube-controller-manager, kube-scheduler; on a zoned bed each zone's replicas too, as
``<role>-<zone>``) · ``control_plane_leader`` {holder, zone} (kcm's and the scheduler's
Leases) · ``link_rtt`` {source, seconds, answered} (a round trip from one zone to another, the
subject) · ``pod_runtime_recording`` {} (the nodes' runtimes are sampled: a cluster with node
machines) · ``pod_runtime_sample`` {nodes} (one sample of every node answered) ·
``pod_running_twice`` {nodes} (a pod, the subject, runs on more than one node at once).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import urllib3
from kubernetes import client, watch

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, ControlPlaneProcess
from zoneproof.measure import lease
from zoneproof.measure.timeline import Timeline
from zoneproof.specs import kubernetes

__all__ = [
    "CONTROL_PLANE_LEASES",
    "ControlPlaneLeaseRecorder",
    "HealthRecorder",
    "LeaseRecorder",
    "LinkRecorder",
    "NodeHeartbeatRecorder",
    "PodReadinessRecorder",
    "NodeReadyRecorder",
    "PodRecorder",
    "PodRuntimeRecorder",
    "Recorder",
    "recording",
]

log = logging.getLogger(__name__)
_WATCH_CHUNK_S = 5  # a watch call returns this often, so stop() is honoured promptly


class Recorder(Protocol):
    """Something that records into a timeline between start() and stop()."""

    def start(self, timeline: Timeline) -> None:
        """Begin recording; returns once the initial state is recorded."""

    def stop(self) -> None:
        """Stop recording and wait for the thread to end."""


def _condition(obj: Any, kind: str) -> str | None:
    for cond in (obj.status and obj.status.conditions) or []:
        if cond.type == kind:
            return str(cond.status)
    return None


class _WatchRecorder:
    """List, then watch from the list's resourceVersion; re-list on 410 Gone or a broken stream."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._thread: threading.Thread | None = None
        self.timeline = Timeline()

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        """The generated list method (Watch reads its docstring to decode objects) and args."""
        raise NotImplementedError

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        raise NotImplementedError

    def start(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=type(self).__name__)
        self._thread.start()
        if not self._synced.wait(30):
            raise TimeoutError(f"{type(self).__name__}: initial list did not finish in 30 s")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(_WATCH_CHUNK_S + 5)

    def _run(self) -> None:
        resource_version: str | None = None
        while not self._stop.is_set():
            try:
                func, args, kwargs = self._call()
                if resource_version is None:
                    listed = func(*args, **kwargs)
                    for obj in listed.items:
                        self._observe(obj, "ADDED", initial=True)
                    resource_version = listed.metadata.resource_version
                    self._synced.set()
                stream = watch.Watch().stream(func, *args, resource_version=resource_version,
                                              timeout_seconds=_WATCH_CHUNK_S,
                                              allow_watch_bookmarks=True, **kwargs)
                for event in stream:
                    if self._stop.is_set():
                        break
                    if event["type"] == "BOOKMARK":  # its object is left undecoded
                        resource_version = event["raw_object"]["metadata"]["resourceVersion"]
                        continue
                    obj = event["object"]
                    resource_version = obj.metadata.resource_version
                    self._observe(obj, event["type"], initial=False)
            except client.ApiException as exc:
                if exc.status == 410:
                    resource_version = None  # too old: re-list
                else:
                    log.debug("%s: watch failed (%s), retrying", type(self).__name__, exc.status)
                    self._stop.wait(0.5)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                log.debug("%s: connection lost (%s), retrying", type(self).__name__, exc)
                self._stop.wait(0.5)


class NodeReadyRecorder(_WatchRecorder):
    """``node_ready`` each time a node's Ready condition changes, ``node_schedulable`` each
    time it is cordoned or uncordoned (both once initially)."""

    def __init__(self, api: client.ApiClient) -> None:
        super().__init__(api)
        self.core = client.CoreV1Api(api)
        self._last: dict[str, str | None] = {}
        self._schedulable: dict[str, bool] = {}

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        return self.core.list_node, (), {}

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        name = obj.metadata.name
        status = "Deleted" if event_type == "DELETED" else _condition(obj, "Ready") or "None"
        if self._last.get(name) != status:
            self._last[name] = status
            zone = (obj.metadata.labels or {}).get(kubernetes.ZONE_LABEL, "")
            self.timeline.add("node_ready", name, status=status, zone=zone,
                              initial=str(initial))
        schedulable = event_type != "DELETED" and not obj.spec.unschedulable
        if self._schedulable.get(name) != schedulable:
            self._schedulable[name] = schedulable
            self.timeline.add("node_schedulable", name, schedulable=str(schedulable),
                              initial=str(initial))


class PodRecorder(_WatchRecorder):
    """Pod lifecycle events in ``namespace`` (None: all) matching ``label_selector``."""

    def __init__(self, api: client.ApiClient, namespace: str | None = None,
                 label_selector: str = "") -> None:
        super().__init__(api)
        self.core = client.CoreV1Api(api)
        self.namespace, self.selector = namespace, label_selector
        self._seen: dict[str, set[str]] = {}

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        kwargs = {"label_selector": self.selector}
        if self.namespace is None:
            return self.core.list_pod_for_all_namespaces, (), kwargs
        return self.core.list_namespaced_pod, (self.namespace,), kwargs

    def _once(self, uid: str, kind: str, subject: str, **detail: str) -> None:
        seen = self._seen.setdefault(uid, set())
        if kind not in seen:
            seen.add(kind)
            self.timeline.add(kind, subject, uid=uid, **detail)

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        meta = obj.metadata
        subject, uid = f"{meta.namespace}/{meta.name}", meta.uid
        node = obj.spec.node_name or ""
        if initial:
            self._seen[uid] = {"pod_created"}
        self._once(uid, "pod_created", subject, node=node)
        if node:
            self._once(uid, "pod_scheduled", subject, node=node)
        if _condition(obj, "Ready") == "True":
            self._once(uid, "pod_ready", subject, node=node)
        if meta.deletion_timestamp is not None:
            grace = str(meta.deletion_grace_period_seconds)
            self._once(uid, "pod_deleting", subject, node=node, grace=grace)
        if event_type == "DELETED":
            self._once(uid, "pod_deleted", subject, node=node)


class PodReadinessRecorder(_WatchRecorder):
    """``pod_readiness`` each time the Ready condition of a pod in ``namespace`` matching
    ``label_selector`` changes (once initially): what a pod's readiness probe finds."""

    def __init__(self, api: client.ApiClient, namespace: str, label_selector: str) -> None:
        super().__init__(api)
        self.core = client.CoreV1Api(api)
        self.namespace, self.selector = namespace, label_selector
        self._last: dict[str, str] = {}

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        return self.core.list_namespaced_pod, (self.namespace,), {
            "label_selector": self.selector}

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        subject = f"{obj.metadata.namespace}/{obj.metadata.name}"
        ready = "Deleted" if event_type == "DELETED" else _condition(obj, "Ready") or "None"
        if self._last.get(subject) != ready:
            self._last[subject] = ready
            self.timeline.add("pod_readiness", subject, ready=ready,
                              node=obj.spec.node_name or "", initial=str(initial))


class LeaseRecorder(_WatchRecorder):
    """``lease_holder`` whenever the holder of Lease ``namespace/name`` changes,
    ``lease_renewed`` whenever the same holder writes a new renewTime (the Lease model's
    input, ``zoneproof.measure.lease``); both carry leaseDurationSeconds and the fencing
    token (leaseTransitions); ``lease_holder`` says renewals are recorded (``renewals``), so
    a holder with no ``lease_renewed`` event did not renew."""

    def __init__(self, api: client.ApiClient, namespace: str, name: str) -> None:
        super().__init__(api)
        self.coordination = client.CoordinationV1Api(api)
        self.namespace, self.name = namespace, name
        self._holder: str | None = "<unset>"
        self._renewed: object = None

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        return (self.coordination.list_namespaced_lease, (self.namespace,),
                {"field_selector": f"metadata.name={self.name}"})

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        spec = obj.spec
        holder = "" if event_type == "DELETED" else (spec.holder_identity or "")
        renewed = None if event_type == "DELETED" else spec.renew_time
        detail = {"holder": holder, "duration_s": str(spec.lease_duration_seconds or ""),
                  "transitions": "" if spec.lease_transitions is None
                  else str(spec.lease_transitions)}
        subject = f"{self.namespace}/{self.name}"
        if holder != self._holder:
            self.timeline.add("lease_holder", subject, **detail, **{lease.RENEWALS: lease.RECORDED})
        elif holder and renewed != self._renewed:
            self.timeline.add("lease_renewed", subject, **detail)
        self._holder, self._renewed = holder, renewed


#: kube-system Leases of the control plane's leader-elected components.
CONTROL_PLANE_LEASES = ("kube-controller-manager", "kube-scheduler")


class ControlPlaneLeaseRecorder(LeaseRecorder):
    """``control_plane_leader`` whenever the holder of a control-plane component's Lease
    (kube-system: kube-controller-manager, kube-scheduler) changes; ``zone`` is what the
    holder's identity starts with (its host name: a zoned bed's replicas are named after
    their zone). A kind of its own: the HA controller's Lease model reads ``lease_holder``."""

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        holder = "" if event_type == "DELETED" else (obj.spec.holder_identity or "")
        if holder != self._holder:
            self.timeline.add("control_plane_leader", f"{self.namespace}/{self.name}",
                              holder=holder, zone=holder.split("_", 1)[0] if holder else "",
                              initial=str(initial))
        self._holder = holder


class NodeHeartbeatRecorder(_WatchRecorder):
    """``node_heartbeat`` each time a kubelet renews its node's Lease (kube-node-lease): the
    heartbeat whose absence shows a kubelet stopped (not once initially)."""

    NAMESPACE = "kube-node-lease"

    def __init__(self, api: client.ApiClient) -> None:
        super().__init__(api)
        self.coordination = client.CoordinationV1Api(api)
        self._renewed: dict[str, object] = {}

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        return self.coordination.list_namespaced_lease, (self.NAMESPACE,), {}

    def _observe(self, obj: Any, event_type: str, initial: bool) -> None:
        node, renewed = obj.metadata.name, obj.spec.renew_time
        if event_type != "DELETED" and not initial and self._renewed.get(node) != renewed:
            self.timeline.add("node_heartbeat", node)
        self._renewed[node] = renewed


_PROCESSES = (ControlPlaneProcess.CONTROLLER_MANAGER, ControlPlaneProcess.SCHEDULER)
"""Control-plane processes whose liveness is polled (the API server's is its /readyz)."""


class _Poller:
    """A recorder that calls ``sample`` every ``interval_s`` on a thread of its own (once at
    once on ``start``, then after each interval) until ``stop``."""

    def __init__(self, interval_s: float, join_s: float = 10.0) -> None:
        self.interval_s, self.join_s = interval_s, join_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.timeline = Timeline()

    def sample(self) -> None:
        """Record one sample."""
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def start(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.sample()
        self._thread = threading.Thread(target=self._run, daemon=True, name=type(self).__name__)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.join_s)


class HealthRecorder(_Poller):
    """Polls API server readiness, etcd member health and leader every ``interval_s``, and
    whether kcm and the scheduler run every ``process_interval_s``; records changes."""

    def __init__(self, cluster: Cluster, interval_s: float = 0.1,
                 process_interval_s: float = 1.0) -> None:
        super().__init__(interval_s)
        self.cluster = cluster
        self.process_interval_s = process_interval_s
        self._last: dict[tuple[str, str], str] = {}
        self._processes_at = float("-inf")

    def _states(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(kind, subject) → (detail key, value) as sampled now."""
        ready = str(self.cluster.apiserver_ready())
        states = {("apiserver_ready", "kube-apiserver"): ("ready", ready)}
        if Capability.ETCD_MEMBERS in self.cluster.capabilities:
            etcd = facets.facet(self.cluster, Capability.ETCD_MEMBERS)
            for member in etcd.etcd_members():
                states[("etcd_member", member)] = ("healthy",
                                                   str(etcd.etcd_member_healthy(member)))
            try:
                leader = etcd.etcd_leader()
            except errors.FaultError:  # no leader now
                leader = ""
            states[("etcd_leader", "etcd")] = ("leader", leader)
        now = self.timeline.now()
        if Capability.ZONES in self.cluster.capabilities:  # every zone's replicas
            zones = facets.facet(self.cluster, Capability.ZONES)
            for process, alive in zones.zone_processes_alive().items():
                states[("process_alive", process)] = ("alive", str(alive))
        if (Capability.CONTROL_PLANE in self.cluster.capabilities
                and now - self._processes_at >= self.process_interval_s):
            self._processes_at = now
            plane = facets.facet(self.cluster, Capability.CONTROL_PLANE)
            for component in _PROCESSES:
                states[("process_alive", component.value)] = (
                    "alive", str(plane.component_running(component)))
        return states

    def sample(self) -> None:
        """Record what changed since the last sample."""
        for (kind, subject), (key, value) in self._states().items():
            if self._last.get((kind, subject)) != value:
                self._last[(kind, subject)] = value
                self.timeline.add(kind, subject, **{key: value})


class LinkRecorder:
    """``link_rtt`` for every ordered pair of zones every ``interval_s``: one round trip over
    the link as the zones' processes use it (Zones.link_round_trips): its seconds, and
    whether it was answered (else the seconds until it failed: a timeout says the link took
    at least that long). Each source zone is probed on a thread of its own."""

    def __init__(self, cluster: Cluster, interval_s: float = 1.0) -> None:
        self.zones = facets.facet(cluster, Capability.ZONES)
        self.sources = sorted(z for z in cluster.nodes_by_zone() if z)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.timeline = Timeline()

    def _run(self, source: str) -> None:
        while not self._stop.is_set():
            try:
                trips = self.zones.link_round_trips(source)
            except (errors.ZoneproofError, OSError) as exc:
                log.debug("link probe from %s failed: %s", source, exc)
                trips = {}
            for zone, (seconds, answered) in trips.items():
                self.timeline.add("link_rtt", zone, source=source, seconds=f"{seconds:.4f}",
                                  answered=str(answered))
            self._stop.wait(self.interval_s)

    def start(self, timeline: Timeline) -> None:
        self.timeline = timeline
        for source in self.sources:
            thread = threading.Thread(target=self._run, args=(source,), daemon=True,
                                      name=f"LinkRecorder-{source}")
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)


class PodRuntimeRecorder(_Poller):
    """Samples, every ``interval_s``, which pods of ``namespace`` run on each node as its
    container runtime has them (``NodeMachines.running_pods``: a node cut off from the API
    runs pods the API no longer shows), and records a pod running on two nodes at once."""

    def __init__(self, cluster: Cluster, namespace: str, interval_s: float = 2.0) -> None:
        super().__init__(interval_s, join_s=30.0)
        self.machines = facets.facet(cluster, Capability.NODE_CONTAINERS)
        self.nodes = sorted(n for names in cluster.nodes_by_zone().values() for n in names)
        self.namespace = namespace

    def start(self, timeline: Timeline) -> None:
        timeline.add("pod_runtime_recording", self.namespace)
        super().start(timeline)

    def sample(self) -> None:
        """One sample of every node (none recorded if a node does not answer)."""
        where: dict[str, list[str]] = {}
        try:
            for node in self.nodes:
                for pod in self.machines.running_pods(node, self.namespace):
                    where.setdefault(pod, []).append(node)
        except (errors.ZoneproofError, OSError, ValueError) as exc:
            log.debug("pod runtime sample failed: %s", exc)
            return
        self.timeline.add("pod_runtime_sample", self.namespace, nodes=str(len(self.nodes)))
        for pod, nodes in sorted(where.items()):
            if len(nodes) > 1:
                self.timeline.add("pod_running_twice", f"{self.namespace}/{pod}",
                                  nodes=",".join(nodes))


@contextlib.contextmanager
def recording(timeline: Timeline, recorders: list[Recorder]) -> Iterator[Timeline]:
    """Run ``recorders`` into ``timeline`` for the duration of the block."""
    started: list[Recorder] = []
    try:
        for recorder in recorders:
            recorder.start(timeline)
            started.append(recorder)
        yield timeline
    finally:
        for recorder in reversed(started):
            recorder.stop()
