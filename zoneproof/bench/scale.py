"""``zoneproof bench controller-scale``: the HA controller at scale, judged against the limit.

A kwok-per-zone bed (default 300 nodes, 100 per zone) and 10,000 pods created bound to
nodes (no scheduler in the way), half of them matching the controller's selector. Once
the controller leads and its caches have synced, zone a goes down. Then, on the same
bed, the pods it deleted are recreated (same names, namespace, nodes, labels) and
force-deleted by the bench itself, all in parallel, with the controller's own client
identity (so under the same API priority level, not the admin's exempt one): the API
server's own ceiling for that work. Every figure is in ``scale_figures``; times of deletes come from the API
server's audit log, NotReady from the bench's own node watch (same machine clock).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import functools
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from kubernetes.client.exceptions import ApiException

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.bench import parallel, procstat
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.local import LocalBackend, LocalCluster, LocalOptions
from zoneproof.cluster.spec import ClusterSpec, Timings
from zoneproof.components.harness.controller import ControllerReplicas, ControllerSettings
from zoneproof.measure import NodeReadyRecorder, Timeline, pod_deletions, recording

__all__ = ["NAMESPACE", "bench_bed_ceiling", "bench_controller_scale",
           "bench_controller_scale_30", "outage_at_scale", "scale_figures", "scale_settings"]

NAMESPACE = "scale"
_DELETE_TIMEOUT_S = 600.0
#: client-go's Lease timings (15/10/2 s), not the harness's failover-test ones (6/4/1 s):
#: this measures reaction, and a loaded 2-core machine must not cost the leader its Lease.
_SETTINGS = ControllerSettings(namespaces=(NAMESPACE,), lease_duration_s=15,
                               renew_deadline_s=10.0, retry_period_s=2.0)
_SYNC_TIMEOUT_S = 180.0
#: kwok marks pods Running at its own pace, behind their creation: on 2 cores ~25-40 pods/s
#: while the bed is full of work, so 100,000 pods take most of an hour.
_RUNNING_TIMEOUT_S = 3600.0


def scale_figures(not_ready: Mapping[str, dt.datetime],
                  deletes: Iterable[tuple[str, dt.datetime]]) -> dict[str, float]:
    """Reaction and completion figures of one outage.

    ``not_ready``: when each node of the zone was seen NotReady; ``deletes``: (node, when)
    of each successful force delete of a pod on it. Reaction of a node: its first delete
    minus its NotReady; zone completion: the last delete minus the first NotReady.
    """
    first: dict[str, dt.datetime] = {}
    last: dict[str, dt.datetime] = {}
    for node, at in sorted(deletes, key=lambda d: d[1]):
        if node in not_ready:
            first.setdefault(node, at)
            last[node] = at
    if not first:
        raise ValueError("no force delete of a pod on a NotReady node")
    reaction = [(first[n] - not_ready[n]).total_seconds() for n in first]
    done = [(last[n] - not_ready[n]).total_seconds() for n in last]
    down_from, down_to = min(not_ready.values()), max(not_ready.values())
    return {
        "reaction_p50_seconds": figures.percentile(reaction, 0.5),
        "reaction_p99_seconds": figures.percentile(reaction, 0.99),
        "reaction_max_seconds": max(reaction),
        "node_done_p99_seconds": figures.percentile(done, 0.99),
        "not_ready_spread_seconds": (down_to - down_from).total_seconds(),
        "zone_completion_seconds": (max(last.values()) - down_from).total_seconds(),
        "nodes_acted_on": float(len(first)),
    }


def earliest_completion(not_ready: Mapping[str, dt.datetime], pods: Mapping[str, int],
                        rate: float) -> float:
    """Seconds from the first NotReady until an instant controller, deleting each node's
    ``pods`` from the moment the node is seen NotReady at ``rate`` deletes/s overall (the
    raw limit), would be done: the bound kcm's pace and the API server together set."""
    start = min(not_ready.values())
    arrivals = sorted(((not_ready[n] - start).total_seconds(), count)
                      for n, count in pods.items() if n in not_ready)
    left = sum(count for _, count in arrivals)
    finish = 0.0
    for at, count in arrivals:  # the queue drains last after some arrival: the latest of these
        finish = max(finish, at + left / rate)
        left -= count
    return finish


def _cpu_now(bed: LocalCluster, controller_pid: int) -> dict[str, float]:
    """CPU seconds used so far by each bed process and by the controller."""
    pids = {name: record.pid for name, record in bed.records().items()}
    return procstat.cpu_by_name({**pids, "controller": controller_pid})


def _cost_figures(before: dict[str, float], after: dict[str, float],
                  seconds: float) -> dict[str, float]:
    """Where the CPU went during the outage: each process group's share of one core, and
    the machine's load (other work on the machine takes CPU from the bed too)."""
    used = {f"outage_cpu_{group}_percent": cpu / seconds * 100
            for group, cpu in procstat.cpu_used_by_group(before, after).items()}
    return {**used, "outage_seconds": seconds, "load_average_1m": os.getloadavg()[0]}


def _footprint(bed: LocalCluster) -> dict[str, float]:
    """What the bed costs at its size: each process's resident memory now and at its peak,
    MiB, and CPU seconds since it started; the largest etcd member's database file, MiB."""
    found: dict[str, float] = {}
    dbs = [0]
    for name, record in bed.records().items():
        try:
            found.update({f"rss_mib_{name}": procstat.rss_mib(record.pid),
                          f"peak_rss_mib_{name}": procstat.peak_rss_mib(record.pid),
                          f"cpu_seconds_{name}": procstat.cpu_seconds(record.pid)})
        except OSError:
            continue  # gone (a kwok the outage stopped)
        if procstat.group_of(name) == "etcd":
            dbs.append((bed.paths.etcd_data(name) / "member" / "snap" / "db").stat().st_size)
    found["etcd_db_mib"] = max(dbs) / 2**20
    return found


def _wait_running(c: parallel.Client, count: int, progress: Progress) -> float:
    """Seconds until kwok has marked every pod of the namespace Running. Each poll asks
    for one pod not Running (a paginated list stops at the first; ``resource_version="0"``
    would ignore the limit and send every one)."""
    start = time.monotonic()

    def running() -> tuple[bool, str]:
        left = c.core.list_namespaced_pod(NAMESPACE, field_selector="status.phase!=Running",
                                          limit=1).items
        return not left, f"{left[0].metadata.name} {left[0].status.phase}" if left else ""

    waiting.wait_for(running, what=f"kwok to mark {count} pods Running",
                     timeout_s=_RUNNING_TIMEOUT_S, interval_s=2.0, ignore=(ApiException,))
    seconds = time.monotonic() - start
    progress(f"{count} pods Running {seconds:.1f}s after their creation")
    return seconds


def _pods(nodes: list[str], count: int) -> list[parallel.BarePod]:
    """``count`` pods dealt round-robin over ``nodes``, every other round matching the
    selector: each node holds about as many matching pods as not."""
    return [parallel.BarePod(NAMESPACE, f"p-{i}", nodes[i % len(nodes)],
                             (("app", "noobaa" if i // len(nodes) % 2 == 0 else "other"),))
            for i in range(count)]


def _create(c: parallel.Client, pods: list[parallel.BarePod], progress: Progress,
            what: str) -> tuple[float, dict[parallel.BarePod, str]]:
    seconds, uids = parallel.create_pods(c, pods)
    rate = len(pods) / seconds
    progress(f"created {len(pods)} {what} in {seconds:.1f}s: {rate:.0f} pods/s "
             f"({c.threads} threads)")
    return rate, uids


def _wait_synced(replicas: ControllerReplicas, identity: str) -> None:
    waiting.wait_for(lambda: ('"caches-synced"' in replicas.log(identity), None),
                     what=f"{identity} to log caches-synced (its pod cache listed)",
                     timeout_s=_SYNC_TIMEOUT_S, interval_s=0.5)


def scale_settings(controller: ControllerSettings | None = None) -> ControllerSettings:
    """What the controller under test is told at scale: its component (default: the
    reference), namespace ``scale``, selector app=noobaa, client-go's Lease timings."""
    if controller is None:
        return _SETTINGS
    return dataclasses.replace(_SETTINGS, component=controller.component,
                               extra_env=controller.extra_env)


def _outage(bed: LocalCluster, spec: ClusterSpec, c: parallel.Client,
            pods: list[parallel.BarePod], progress: Progress, *, workdir: Path,
            settings: ControllerSettings
            ) -> tuple[dict[str, float], list[parallel.BarePod], Path, dict[str, dt.datetime]]:
    """Zone a down under the controller: its figures, the pods it deleted, its kubeconfig,
    when each node was seen NotReady. The controller's log, the audit log and the NotReady
    times are written to ``workdir``."""
    replicas = ControllerReplicas(bed, settings, workdir, replicas=1)
    replicas.start_all()
    try:
        identity = replicas.wait_leader(60)
        _wait_synced(replicas, identity)
        zone_a = set(spec.node_names(spec.zones[0]))
        doomed = {p.name: p for p in pods if p.node in zone_a and ("app", "noobaa") in p.labels}
        pid = replicas.records[identity].pid
        timeline = Timeline()
        with recording(timeline, [NodeReadyRecorder(c.api)]):
            cpu, start = _cpu_now(bed, pid), time.monotonic()
            bed.zone_down(spec.zones[0])
            progress(f"zone {spec.zones[0]} down: waiting for {len(doomed)} force deletes")

            def deleted() -> tuple[bool, int]:
                if not replicas.alive(identity):
                    raise errors.ZoneproofError(
                        f"the controller exited ({replicas.wait_exit(identity, 5)}) during the "
                        f"outage (3: it could not renew its Lease in time); its log: "
                        f"{workdir / (identity + '.log')}")
                done = {d.pod for d in pod_deletions(bed.audit_log(), users_prefix=identity)
                        if d.code == 200}
                return done >= doomed.keys(), len(done)

            waiting.wait_for(deleted, what=f"{len(doomed)} force deletes",
                             timeout_s=_DELETE_TIMEOUT_S, interval_s=1.0)
            measured = _cost_figures(cpu, _cpu_now(bed, pid), time.monotonic() - start)
        measured["controller_rss_mib"] = procstat.rss_mib(pid)
    finally:
        replicas.stop_all()
    not_ready = {e.subject: dt.datetime.fromisoformat(e.wall)
                 for e in timeline.select("node_ready")
                 if e.subject in zone_a and e.detail["status"] != "True"}
    shutil.copy(bed.audit_log(), workdir / "audit.log")
    (workdir / "not-ready.json").write_text(json.dumps({n: t.isoformat()
                                                        for n, t in not_ready.items()}))
    deletes = [(doomed[d.pod].node, d.at)
               for d in pod_deletions(bed.audit_log(), users_prefix=identity)
               if d.code == 200 and d.pod in doomed]
    measured.update(scale_figures(not_ready, deletes))
    measured["force_deletes"] = float(len(doomed))
    return (measured, sorted(doomed.values(), key=lambda p: p.name),
            replicas.kubeconfig(identity), not_ready)


def outage_at_scale(nodes_per_zone: int, count: int, progress: Progress, workdir: Path,
                    controller: ControllerSettings | None = None) -> dict[str, float]:
    """One fresh kwok-per-zone local bed of ``nodes_per_zone`` × 3 nodes and ``count`` bare
    pods; zone a down under the controller (``scale_settings(controller)``), then the raw
    parallel force delete of the same pods: every figure of ``scale_figures`` and the limit.
    The bed is deleted at the end; logs stay in ``workdir``."""
    backend = LocalBackend(LocalOptions(kwok_per="zone"))
    spec = ClusterSpec(name=f"zp-scale-{uuid.uuid4().hex[:6]}", nodes_per_zone=nodes_per_zone,
                       timings=Timings(node_monitor_grace_period_s=20, node_lease_duration_s=10))
    up_started = time.monotonic()
    bed = backend.create(spec, progress=progress)
    bed_up_s = time.monotonic() - up_started
    c = parallel.Client(bed.kubeconfig)
    try:
        c.core.create_namespace({"metadata": {"name": NAMESPACE}})
        all_nodes = [n for ns in spec.nodes_by_zone().values() for n in ns]
        pods = _pods(all_nodes, count)
        rate, _ = _create(c, pods, progress, "pods")
        running_s = _wait_running(c, count, progress)
        at_size = _footprint(bed)
        progress("at size: " + ", ".join(f"{k}={v:.0f}" for k, v in at_size.items()
                                          if not k.startswith("peak_")))
        measured, deleted, identity, not_ready = _outage(
            bed, spec, c, pods, progress, workdir=workdir, settings=scale_settings(controller))
        measured.update({"bed_up_seconds": bed_up_s, "pods_running_seconds": running_s,
                         **at_size})
        _, uids = _create(c, deleted, progress, "pods again (the ones force-deleted)")
        as_controller = parallel.Client(identity)  # its API priority level, not the admin's
        try:
            raw_s = parallel.force_delete(as_controller, uids)
        finally:
            as_controller.close()
        measured.update({k: v for k, v in _footprint(bed).items() if k.startswith("peak_")})
        progress(f"raw parallel force delete of {len(uids)} pods as the controller's user: "
                 f"{raw_s:.2f}s ({len(uids) / raw_s:.0f}/s, {as_controller.threads} threads)")
        per_node = collections.Counter(p.node for p in deleted)
        bound = earliest_completion(not_ready, per_node, len(uids) / raw_s)
        measured.update({
            "pods_created_per_second": rate,
            "raw_delete_seconds": raw_s,
            "raw_deletes_per_second": len(uids) / raw_s,
            "completion_to_raw_ratio": measured["zone_completion_seconds"] / raw_s,
            "earliest_completion_seconds": bound,
            "completion_to_earliest_ratio": measured["zone_completion_seconds"] / bound,
        })
        return measured
    finally:
        c.close()
        backend.delete(spec.name, progress=progress)


def bench_controller_scale(runs: int, progress: Progress, out: Path | None = None,
                           nodes_per_zone: int = 100, pods: int = 10_000
                           ) -> figures.Summary:
    """``runs`` measured beds; every figure of ``scale_figures`` plus the raw limit."""
    samples = figures.Samples()
    with figures.artefacts_dir(out, "controller-scale", progress) as kept:
        for run in range(1, runs + 1):
            measured = outage_at_scale(nodes_per_zone, pods, progress, kept / f"run-{run}")
            for key, value in measured.items():
                samples.note(key, value)
            progress(f"run {run}/{runs}: "
                     + ", ".join(f"{k}={v:.2f}" for k, v in measured.items()))
    return figures.summarize(samples, progress, out)


bench_controller_scale_30 = functools.partial(bench_controller_scale, nodes_per_zone=10,
                                              pods=1_000)
"""The same at 30 nodes and 1,000 pods (the same pods per node)."""
bench_bed_ceiling = functools.partial(bench_controller_scale, nodes_per_zone=334, pods=100_000)
"""The same at kwok's claim for one machine: 1,002 nodes and 100,000 pods (~100 per node);
every bed process's memory and CPU at that size (``_footprint``)."""
