"""``zoneproof bench controller-scale``: HA controller reaction at scale (300 nodes, 10 000 pods).

A kwok-per-zone bed; pods are created bound to nodes (no scheduler in the way), half of
them matching the controller's selector. Zone a goes down; for each of its nodes the
reaction time is the first audited force-delete of a pod on it minus the moment the node
was seen NotReady (both wall clock, same machine).
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.local import LocalBackend, LocalOptions
from zoneproof.cluster.spec import ClusterSpec, Timings
from zoneproof.components.harness.controller import ControllerReplicas, ControllerSettings
from zoneproof.measure import NodeReadyRecorder, Timeline, pod_deletions, recording

__all__ = ["bench_controller_scale"]

NAMESPACE = "scale"


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _create_pods(core: client.CoreV1Api, nodes: list[str], count: int, progress: Progress) -> None:
    def create(i: int) -> None:
        labels = {"app": "noobaa" if i % 2 == 0 else "other"}
        core.create_namespaced_pod(NAMESPACE, {
            "metadata": {"name": f"p-{i}", "labels": labels},
            "spec": {"nodeName": nodes[i % len(nodes)],
                     "containers": [{"name": "c", "image": "fake"}]}})

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(create, range(count)))
    progress(f"created {count} pods in {time.monotonic() - start:.0f}s")


def _one_run(backend: LocalBackend, nodes_per_zone: int, pods: int, progress: Progress
             ) -> dict[str, float]:
    spec = ClusterSpec(name=f"zp-scale-{uuid.uuid4().hex[:6]}", nodes_per_zone=nodes_per_zone,
                       timings=Timings(node_monitor_grace_period_s=20, node_lease_duration_s=10))
    bed = backend.create(spec, progress=progress)
    workdir = Path(tempfile.mkdtemp(prefix="zp-scale-"))
    try:
        api = kube.api_client(bed.kubeconfig)
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": NAMESPACE}})
        all_nodes = [n for ns in spec.nodes_by_zone().values() for n in ns]
        _create_pods(core, all_nodes, pods, progress)
        replicas = ControllerReplicas(bed, ControllerSettings(namespaces=(NAMESPACE,)),
                                      workdir, replicas=1)
        replicas.start_all()
        replicas.wait_leader(60)
        identity = replicas.identities[0]
        zone_a = set(spec.node_names(spec.zones[0]))
        expected = sum(1 for i in range(pods)
                       if i % 2 == 0 and all_nodes[i % len(all_nodes)] in zone_a)
        timeline = Timeline()
        with recording(timeline, [NodeReadyRecorder(api)]):
            bed.zone_down(spec.zones[0])

            def all_deleted() -> tuple[bool, int]:
                done = len(pod_deletions(bed.audit_log(), users_prefix=identity))
                return done >= expected, done

            waiting.wait_for(all_deleted, what=f"{expected} force-deletes", timeout_s=600,
                             interval_s=1.0)
        rss = _rss_mib(replicas.records[identity].pid)
        replicas.stop_all()
        not_ready = {e.subject: dt.datetime.fromisoformat(e.wall)
                     for e in timeline.select("node_ready") if e.subject in zone_a
                     and e.detail["status"] != "True"}
        node_of = {f"p-{i}": all_nodes[i % len(all_nodes)] for i in range(pods)}
        first: dict[str, dt.datetime] = {}
        last: dict[str, dt.datetime] = {}
        for deletion in pod_deletions(bed.audit_log(), users_prefix=identity):
            node = node_of[deletion.pod]
            first.setdefault(node, deletion.at)
            last[node] = deletion.at
        reaction = [(first[n] - not_ready[n]).total_seconds() for n in first if n in not_ready]
        completion = [(last[n] - not_ready[n]).total_seconds() for n in last if n in not_ready]
        return {
            "reaction_p50_seconds": figures.percentile(reaction, 0.5),
            "reaction_p99_seconds": figures.percentile(reaction, 0.99),
            "node_done_p99_seconds": figures.percentile(completion, 0.99),
            "force_deletes": float(expected),
            "controller_rss_mib": rss,
        }
    finally:
        backend.delete(spec.name, progress=progress)


def bench_controller_scale(runs: int, progress: Progress, out: Path | None = None,
                           nodes_per_zone: int = 100, pods: int = 10_000
                           ) -> figures.Summary:
    """``runs`` measured beds; figures: reaction p50/p99 per run, controller RSS."""
    backend = LocalBackend(LocalOptions(kwok_per="zone"))
    samples: dict[str, list[float]] = {}
    for run in range(1, runs + 1):
        measured = _one_run(backend, nodes_per_zone, pods, progress)
        for key, value in measured.items():
            samples.setdefault(key, []).append(value)
        progress(f"run {run}/{runs}: " + ", ".join(f"{k}={v:.2f}" for k, v in measured.items()))
    return figures.summarize(samples, progress, out)
