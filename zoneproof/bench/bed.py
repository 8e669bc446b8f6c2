"""``zoneproof bench bed`` / ``bed-zones``: figures of the local bed (flat or zoned layout),
as medians over several fresh beds."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.bench import procstat
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.local import LocalBackend, LocalCluster, LocalOptions
from zoneproof.cluster.spec import ClusterSpec

__all__ = ["bench_bed", "bench_bed_zones"]

_IDLE_WINDOW_S = 10.0


def _idle(bed: LocalCluster) -> tuple[float, float]:
    """(total RSS MiB, CPU % of one core) of every bed process over an idle window."""
    pids = [r.pid for r in bed.records().values()]
    before = sum(procstat.cpu_seconds(p) for p in pids)
    time.sleep(_IDLE_WINDOW_S)  # measuring idle load: nothing to wait for
    cpu = (sum(procstat.cpu_seconds(p) for p in pids) - before) / _IDLE_WINDOW_S * 100
    return sum(procstat.rss_mib(p) for p in pids), cpu


def _not_ready_detection(bed: LocalCluster) -> float:
    node = bed.spec.node_names(bed.spec.zones[0])[0]
    start = time.monotonic()
    bed.stop_kubelet(node)
    bed.wait_nodes([node], ready=False, timeout_s=120)
    elapsed = time.monotonic() - start
    bed.start_kubelet(node)
    bed.wait_nodes([node], ready=True, timeout_s=60)
    return elapsed


def _etcd_failover(bed: LocalCluster) -> tuple[float, float]:
    """(seconds to a new etcd leader, seconds until a write through the API succeeds)."""
    core = client.CoreV1Api(kube.api_client(bed.kubeconfig, retries=0))
    old = bed.etcd_leader()
    start = time.monotonic()
    bed.kill_etcd_member(old)

    def new_leader() -> tuple[bool, str]:
        leader = bed.etcd_leader()
        return leader != old, leader

    waiting.wait_for(new_leader, what="a new etcd leader", timeout_s=30, interval_s=0.02,
                     ignore=(errors.FaultError,))
    election = time.monotonic() - start

    def write() -> tuple[bool, None]:
        core.create_namespaced_config_map("default", {"metadata": {
            "generateName": "bench-"}}, _request_timeout=5)
        return True, None

    waiting.wait_for(write, what="a write", timeout_s=30, interval_s=0.05,
                     ignore=(client.ApiException, urllib3.exceptions.HTTPError))
    window = time.monotonic() - start
    bed.restart_etcd_member(old)
    bed.wait_etcd_healthy()
    return election, window


def bench_bed(runs: int, progress: Progress, out: Path | None = None,
              options: LocalOptions | None = None) -> figures.Summary:
    """Measure ``runs`` fresh beds; returns figure → {median, min, max} and prints a table."""
    backend = LocalBackend(options)
    if options is not None and backend.options != options:
        raise errors.ConfigError(f"the local backend cannot make {options} beds here (see the "
                                 "warning above)")
    samples = figures.Samples()
    note = samples.note

    for run in range(1, runs + 1):
        spec = ClusterSpec(name=f"zp-bench-{uuid.uuid4().hex[:6]}")
        with figures.timed_bed(backend, spec, samples, lambda _: None) as bed:
            rss, cpu = _idle(bed)
            note("idle_rss_mib", rss)
            note("idle_cpu_percent", cpu)
            note("not_ready_detection_seconds", _not_ready_detection(bed))
            election, window = _etcd_failover(bed)
            note("etcd_reelection_seconds", election)
            note("etcd_write_error_window_seconds", window)
        progress(f"run {run}/{runs}: {samples.last_run()}")
    return figures.summarize(samples, progress, out)



def bench_bed_zones(runs: int, progress: Progress, out: Path | None = None) -> figures.Summary:
    """``bench_bed`` of the zoned layout (``--layout zones``: root)."""
    return bench_bed(runs, progress, out, LocalOptions(layout="zones"))
