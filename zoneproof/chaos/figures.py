"""The figure behind each SLO metric name, from a closed run's timeline and fault records.

Which fault a figure is about is fixed per metric (node metrics read the kubelet/zone
faults, ``lease_failover`` the controller-leader kill, ...); with several such faults
the worst figure counts. No matching fault, or missing events, gives None (NO_DATA).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

from zoneproof.chaos.session import Run
from zoneproof.faults import FaultRecord
from zoneproof.measure import PodDeletion, pod_deletions, unfenced_deletes
from zoneproof.slo import metrics
from zoneproof.traffic import workloads

__all__ = ["METRICS", "compute", "unfenced"]

NODE_FAULTS = ("stop-kubelets", "zone-outage")
ETCD_FAULTS = ("kill-etcd-member",)
CONTROLLER_FAULTS = ("kill-controller-leader",)
REPLICA_PREFIX = "zp-hac"
"""User names of the controller replicas (ControllerReplicas' identities) start with this."""


def _worst(values: Iterable[float | None]) -> float | None:
    collected = list(values)
    if not collected or any(v is None for v in collected):
        return None
    return max(v for v in collected if v is not None)


def _records(run: Run, names: tuple[str, ...]) -> list[FaultRecord]:
    return [r for r in run.injector.records if r.name in names]


def _pods_on_targets(run: Run, record: FaultRecord, prefix: str) -> list[str]:
    """Workload pods (``ns/name`` starting with ``prefix``) scheduled on a target before the fault."""
    return sorted({e.subject for e in run.timeline.select("pod_scheduled")
                   if e.t <= record.injected_at and e.detail.get("node") in record.targets
                   and e.subject.startswith(prefix)})


def _not_ready(run: Run) -> float | None:
    return _worst(metrics.not_ready_detection(run.timeline, r)
                  for r in _records(run, NODE_FAULTS))


def _force_delete(run: Run) -> float | None:
    return _worst(metrics.force_delete_after_not_ready(
        run.timeline, r, _pods_on_targets(run, r, f"{run.namespace}/"))
        for r in _records(run, NODE_FAULTS) if _pods_on_targets(run, r, f"{run.namespace}/"))


def _statefulset(run: Run) -> float | None:
    return _worst(metrics.pod_ready_elsewhere(
        run.timeline, r, _pods_on_targets(run, r, f"{run.namespace}/db-"))
        for r in _records(run, NODE_FAULTS) if _pods_on_targets(run, r, f"{run.namespace}/db-"))


def _failover(run: Run) -> float | None:
    return _worst(metrics.lease_failover(run.timeline, r, run.settings.lease)
                  for r in _records(run, CONTROLLER_FAULTS))


def _write_window(run: Run) -> float | None:
    return _worst(metrics.write_error_window(run.timeline, r)
                  for r in _records(run, ETCD_FAULTS))


def _lost_writes(run: Run) -> float | None:
    return metrics.lost_acknowledged_writes(run.timeline)


def _replica_deletions(run: Run) -> list[PodDeletion] | None:
    audit = run.cluster.audit_log()
    if audit is None:
        return None
    since = dt.datetime.fromisoformat(run.timeline.start_wall)
    return [d for d in pod_deletions(audit, users_prefix=REPLICA_PREFIX)
            if d.namespace == run.namespace and d.at >= since]


def _non_holders(run: Run) -> float | None:
    deletions = _replica_deletions(run)
    if deletions is None:
        return None
    return metrics.deletes_by_non_holders(run.timeline, deletions, users_prefix=REPLICA_PREFIX)


def unfenced(run: Run) -> list[str]:
    """One line per audited replica delete made outside its Lease tenure (for messages)."""
    return [u.describe() for u in unfenced_deletes(_replica_deletions(run) or [],
                                                   run.timeline.events,
                                                   users_prefix=REPLICA_PREFIX)]


def _pdb_budget(run: Run) -> float | None:
    deployed = run.timeline.first("workloads_deployed")
    if deployed is None or int(deployed.detail.get("pdb_max_unavailable", "0")) < 1:
        return None
    return metrics.pdb_budget_exceeded(
        run.timeline, [f"{run.namespace}/{w}-" for w in workloads.WORKLOADS],
        int(deployed.detail["replicas"]), int(deployed.detail["pdb_max_unavailable"]))


def _failed_admissions(run: Run) -> float | None:
    return metrics.failed_admissions(run.timeline, run.injector.records)


METRICS: dict[str, Callable[[Run], float | None]] = {
    "not_ready_detection": _not_ready,
    "force_delete_after_not_ready": _force_delete,
    "statefulset_recovery": _statefulset,
    "lease_failover": _failover,
    "etcd_write_error_window": _write_window,
    "lost_acknowledged_writes": _lost_writes,
    "deletes_by_non_holders": _non_holders,
    "failed_admissions": _failed_admissions,
    "pdb_budget_exceeded": _pdb_budget,
}


def compute(metric: str, run: Run) -> float | None:
    """The figure for ``metric`` (None when unknown to zoneproof or not measurable)."""
    figure = METRICS.get(metric)
    return None if figure is None else figure(run)
