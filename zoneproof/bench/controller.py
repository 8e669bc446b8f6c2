"""``zoneproof bench controller``: the HA controller's figures on one default bed.

Per run, one node outage: bare matching pods, a StatefulSet and a Deployment sit on the
node in a namespace the controller watches and (the baseline) in one it does not.
Figures: reaction (NotReady observed → audited force-delete, per pod, p50/p99), StatefulSet
and Deployment pods Ready elsewhere with and without the controller (the baseline
StatefulSet never recovers while the node is down: its figure is how long it was seen
stuck), and Lease failover after SIGKILL and SIGTERM of the leader.
"""

from __future__ import annotations

import datetime as dt
import signal
import time
import uuid
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.local import LocalBackend, LocalCluster
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.components.harness.controller import (
    REPLICA_PREFIX,
    ControllerReplicas,
    ControllerSettings,
)
from zoneproof.faults import FaultRecord, Injector, StopKubelets
from zoneproof.measure import (
    NodeReadyRecorder,
    PodRecorder,
    Timeline,
    pod_deletions,
    recording,
)
from zoneproof.slo import metrics

__all__ = ["bench_controller"]

_BARE_PODS = 10
_LABELS = {"app": "noobaa"}
_STUCK_MARGIN_S = 10.0
_TIMEOUT_S = 120.0


def _template(name: str, node: str) -> dict[str, Any]:
    preferred = [{"weight": 100, "preference": {"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}}]
    return {"metadata": {"labels": {**_LABELS, "workload": name}}, "spec": {
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
        "containers": [{"name": "c", "image": "fake"}]}}


def _populate(api: client.ApiClient, namespace: str, node: str, bare: int) -> None:
    """StatefulSet ``db``, Deployment ``core`` (preferring ``node``) and ``bare`` pods on it."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    core.create_namespace({"metadata": {"name": namespace}})
    for name, create, extra in (("db", apps.create_namespaced_stateful_set, {"serviceName": "db"}),
                                ("core", apps.create_namespaced_deployment, {})):
        create(namespace, {"metadata": {"name": name}, "spec": {
            "replicas": 1, "selector": {"matchLabels": {**_LABELS, "workload": name}},
            "template": _template(name, node), **extra}})
    for i in range(bare):
        core.create_namespaced_pod(namespace, {"metadata": {"name": f"bare-{i}", "labels": _LABELS},
                                               "spec": {"nodeName": node, "containers": [
                                                   {"name": "c", "image": "fake"}]}})

    def placed() -> tuple[bool, dict[str, str]]:
        pods = core.list_namespaced_pod(namespace).items
        where = {p.metadata.name: f"{p.spec.node_name}/{p.status.phase}" for p in pods}
        return len(pods) == bare + 2 and set(where.values()) == {f"{node}/Running"}, where

    waiting.wait_for(placed, what=f"{namespace} pods Running on {node}", timeout_s=60)


def _wait_elsewhere(timeline: Timeline, fault: FaultRecord, namespace: str,
                    workload: str) -> float:
    prefix = f"{namespace}/{workload}-"
    return waiting.wait_for_value(lambda: metrics.ready_elsewhere(timeline, fault, prefix),
                                  what=f"{prefix}* Ready off {fault.targets}",
                                  timeout_s=_TIMEOUT_S)


def _outage(bed: LocalCluster, replicas: ControllerReplicas, node: str, watched: str,
            baseline: str) -> tuple[dict[str, float], list[float]]:
    """One node down and back: workload figures and per-pod reaction times."""
    api = replicas.api
    timeline = Timeline()
    grace, toleration = bed.spec.timings.node_monitor_grace_period_s, bed.spec.timings.toleration_s
    injector = Injector(bed, timeline)
    stuck_s = toleration + grace + _STUCK_MARGIN_S
    with recording(timeline, [NodeReadyRecorder(api), PodRecorder(api)]):
        with injector.injected(StopKubelets(nodes=(node,)),
                               max_duration_s=stuck_s + 4 * _TIMEOUT_S):
            fault = injector.records[-1]
            found = {
                "sts_recovery_with_controller_seconds": _wait_elsewhere(
                    timeline, fault, watched, "db"),
                "deployment_replace_with_controller_seconds": _wait_elsewhere(
                    timeline, fault, watched, "core"),
                "deployment_replace_without_controller_seconds": _wait_elsewhere(
                    timeline, fault, baseline, "core")}
            stopped = fault.injected_at
            try:
                waiting.wait_for(lambda: (metrics.ready_elsewhere(timeline, fault, f"{baseline}/db-")
                                          is not None, None), what="baseline StatefulSet",
                                 timeout_s=max(0.0, stopped + stuck_s - timeline.now()))
                raise errors.ZoneproofError(f"the baseline StatefulSet {baseline}/db recovered "
                                            "without the controller: the bed is not as expected")
            except waiting.WaitTimeout:
                found["sts_stuck_without_controller_seconds"] = timeline.now() - stopped
        bed.wait_nodes([node], ready=True, timeout_s=_TIMEOUT_S)
    event = next(e for e in timeline.select("node_ready", node, after=stopped)
                 if e.detail["status"] != "True")
    not_ready = dt.datetime.fromisoformat(event.wall)
    deletes = [d for d in pod_deletions(bed.audit_log(), users_prefix=REPLICA_PREFIX)
               if d.namespace == watched and d.pod.startswith("bare-")]
    return found, [(d.at - not_ready).total_seconds() for d in deletes]


def _failover(replicas: ControllerReplicas, sig: signal.Signals, timeout_s: float) -> float:
    """Seconds from ``sig`` to the leader until another replica holds the Lease."""
    leader = replicas.wait_leader(timeout_s)
    start = time.monotonic()
    replicas.signal(leader, sig)
    replicas.wait_leader(timeout_s, not_=leader)
    elapsed = time.monotonic() - start
    replicas.wait_exit(leader, timeout_s)
    replicas.start(leader)  # back as standby
    return elapsed


def bench_controller(runs: int, progress: Progress, out: Path | None = None) -> figures.Summary:
    """``runs`` outages and failovers on one bed; medians, plus reaction p50/p99 over all pods."""
    backend = LocalBackend()
    bed = backend.create(ClusterSpec(name=f"zp-bench-hac-{uuid.uuid4().hex[:6]}"),
                         progress=lambda _: None)
    samples: dict[str, list[float]] = {}
    reactions: list[float] = []
    try:
        with figures.artefacts_dir(out, "controller", progress) as kept:
            api = kube.api_client(bed.kubeconfig)
            node = bed.spec.node_names(bed.spec.zones[0])[0]
            for run in range(1, runs + 1):
                watched, baseline = f"bench-w{run}", f"bench-u{run}"
                _populate(api, watched, node, _BARE_PODS)
                _populate(api, baseline, node, 0)
                settings = ControllerSettings(namespaces=(watched,))
                replicas = ControllerReplicas(bed, settings, kept / f"run-{run}")
                try:
                    replicas.start_all()
                    replicas.wait_leader(_TIMEOUT_S)
                    found, reaction = _outage(bed, replicas, node, watched, baseline)
                    reactions += reaction
                    timeout = settings.lease_duration_s + _TIMEOUT_S
                    for name, sig in (("sigkill", signal.SIGKILL), ("sigterm", signal.SIGTERM)):
                        found[f"failover_{name}_seconds"] = _failover(replicas, sig, timeout)
                finally:
                    replicas.stop_all()
                for key, value in found.items():
                    samples.setdefault(key, []).append(value)
                progress(f"run {run}/{runs}: "
                         + ", ".join(f"{k}={v:.2f}" for k, v in found.items()))
    finally:
        backend.delete(bed.name, progress=lambda _: None)
    if reactions:
        samples["reaction_p50_seconds"] = [figures.percentile(reactions, 0.5)]
        samples["reaction_p99_seconds"] = [figures.percentile(reactions, 0.99)]
    return figures.summarize(samples, progress, out)
