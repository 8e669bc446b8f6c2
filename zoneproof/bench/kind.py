"""``zoneproof bench kind``: figures of the 7-node multi-zone kind cluster, medians over runs."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.kind import KindBackend, KindCluster, docker
from zoneproof.cluster.spec import ClusterSpec

__all__ = ["bench_kind"]

_SETTLE_S = 20.0


def _not_ready_detection(cluster: KindCluster) -> float:
    node = cluster.nodes_by_zone()[cluster.spec.zones[0]][0]
    start = time.monotonic()
    cluster.stop_kubelet(node)
    try:
        cluster.wait_nodes([node], ready=False, timeout_s=120)
        return time.monotonic() - start
    finally:
        cluster.start_kubelet(node)
        cluster.wait_nodes([node], ready=True, timeout_s=120)


def bench_kind(runs: int, progress: Progress, out: Path | None = None) -> figures.Summary:
    """Up (every node Ready), memory of the node containers, NotReady detection, down."""
    backend = KindBackend()
    samples = figures.Samples()
    note = samples.note

    for run in range(1, runs + 1):
        spec = ClusterSpec(name=f"bench-{uuid.uuid4().hex[:6]}", etcd_members=1)
        with figures.timed_bed(backend, spec, samples, progress) as cluster:
            time.sleep(_SETTLE_S)  # let start-up work finish before measuring idle memory
            note("memory_mib", sum(docker.memory_mib(list(cluster.containers())).values()))
            note("not_ready_detection_seconds", _not_ready_detection(cluster))
        progress(f"run {run}/{runs}: {samples.last_run()}")
    return figures.summarize(samples, progress, out)
