"""The figure behind each SLO metric name, from a run's evidence (no chaos run needed).

Each figure reads the fault records it is about *by effect* (node figures read the faults
that must turn nodes NotReady, ``lease_failover`` those that must cost the controller its
leader, ...); with several such faults the worst figure counts. No matching fault, or
missing events, gives None (NO_DATA, a fail unless allowed): never a silent pass.

Most figures are a number the SLO bounds (``results.evaluate``). A figure may instead judge
its SLO itself (``Figure.judge``) when a number cannot say what happened: the register
history's check is VOID under the traffic's minimum rate, NO_DATA when the checker ran out
of time, a FAIL naming the operations it could not place (``linearizability.judge``).
``result`` is the one entry point: the SLO's result from the evidence; ``offenders`` names
what the judged SLOs' figures counted against them (a figure that can: ``Figure.offenders``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from zoneproof.components.harness.controller import REPLICA_PREFIX
from zoneproof.faults.base import FaultRecord
from zoneproof.faults.effects import Effect
from zoneproof.measure.attribution import deletes_by_non_holders
from zoneproof.measure.audit import LeaseRequest, PodDeletion
from zoneproof.measure.history import History
from zoneproof.measure.timeline import Timeline
from zoneproof.slo import linearizability, metrics, zone_metrics
from zoneproof.slo.results import SloResult, evaluate
from zoneproof.slo.spec import Slo
from zoneproof.traffic import workloads

__all__ = ["FIGURES", "RUNTIME_METRICS", "SCALE_METRICS", "Evidence", "Figure", "compute",
           "offenders", "result", "unfenced"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a run leaves to judge it by: its timeline, its fault records and the facts the
    figures need (the chaos control builds it; a saved run can be re-judged from it)."""

    timeline: Timeline
    faults: tuple[FaultRecord, ...]
    namespace: str
    """The run's workload namespace (its pods are on the timeline)."""
    lease: str = ""
    """NAMESPACE/NAME of the controller's Lease."""
    deletions: tuple[PodDeletion, ...] | None = None
    """Audited pod deletes by controller replicas in ``namespace`` during the run (None:
    the cluster has no readable audit log)."""
    lease_writes: tuple[LeaseRequest, ...] | None = None
    """Audited successful writes of ``lease`` during the run, anyone's, with the holder and
    duration each left (None: no readable audit log): the Lease figures' record."""
    replica_prefix: str = REPLICA_PREFIX
    history: History | None = None
    """The register history the run's traffic recorded (None: the run ran no traffic)."""
    history_check: linearizability.CheckReport | None = None
    """porcupine's verdict on ``history`` (None: not checked)."""

    @property
    def first_fault_at(self) -> float | None:
        """When the first fault was injected (None: no fault)."""
        return min((r.injected_at for r in self.faults), default=None)

    def faults_causing(self, effects: Iterable[Effect]) -> list[FaultRecord]:
        """The records of the faults that must cause any of ``effects``."""
        wanted = tuple(effects)
        return [r for r in self.faults if r.causes(*wanted)]


Compute = Callable[[Evidence, Sequence[FaultRecord]], float | None]
Judge = Callable[[Slo, Evidence, Sequence[FaultRecord]], SloResult]
Offenders = Callable[[Evidence], list[str]]


@dataclass(frozen=True, slots=True)
class Figure:
    """One metric: the effects of the faults it is about (none: about no fault), how it is
    computed from the evidence and those faults' records, (``judge``) how it judges its
    SLO when a number alone cannot (default: ``results.evaluate`` of the number), and
    (``offenders``) one line per thing it counts, for messages."""

    effects: frozenset[Effect]
    compute: Compute
    judge: Judge | None = None
    offenders: Offenders | None = None


def _worst(values: Iterable[float | None]) -> float | None:
    collected = list(values)
    if not collected or any(v is None for v in collected):
        return None
    return max(v for v in collected if v is not None)


def _pods_on_targets(ev: Evidence, record: FaultRecord, prefix: str) -> list[str]:
    """Pods (``ns/name`` starting with ``prefix``) scheduled on a target before the fault."""
    return sorted({e.subject for e in ev.timeline.select("pod_scheduled")
                   if e.t <= record.injected_at and e.detail.get("node") in record.targets
                   and e.subject.startswith(prefix)})


def _not_ready(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return _worst(metrics.not_ready_detection(ev.timeline, r) for r in faults)


def _force_delete(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    prefix = f"{ev.namespace}/"
    return _worst(metrics.force_delete_after_not_ready(ev.timeline, r, pods)
                  for r in faults if (pods := _pods_on_targets(ev, r, prefix)))


def _statefulset(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    prefix = f"{ev.namespace}/db-"
    return _worst(metrics.pod_ready_elsewhere(ev.timeline, r, pods)
                  for r in faults if (pods := _pods_on_targets(ev, r, prefix)))


def _twice(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return _worst(metrics.pods_running_twice(ev.timeline, r, f"{ev.namespace}/") for r in faults)


def _failover(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return _worst(metrics.lease_failover(ev.timeline, r, ev.lease) for r in faults)


def _zone_failover(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    """The zone's selected pods all force-deleted, from its first node NotReady; None unless
    the Lease changed hands after the fault (the leader was not in the zone: the outage did
    not hit the controller)."""
    prefix = f"{ev.namespace}/"
    return _worst(metrics.zone_force_delete(ev.timeline, r, pods)
                  if metrics.lease_failover(ev.timeline, r, ev.lease) is not None else None
                  for r in faults if (pods := _pods_on_targets(ev, r, prefix)))


def _zone_admissions(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return _worst(metrics.failed_admissions_after_detection(ev.timeline, r) for r in faults)


def _write_window(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return _worst(metrics.write_error_window(ev.timeline, r) for r in faults)


def _lost_writes(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return metrics.lost_acknowledged_writes(ev.timeline)


def _audited_deletes(metric: Callable[..., float | None]) -> Compute:
    """A figure of the run's audited replica deletes against its Lease history (None
    without an audit log)."""
    def compute(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
        if ev.deletions is None:
            return None
        return metric(ev.deletions, ev.lease_writes, users_prefix=ev.replica_prefix)
    return compute


def _lease_overlaps(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return metrics.lease_overlaps(ev.lease_writes)


def _lease_tokens(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return metrics.lease_token_regressions(ev.timeline)


def _judge_tokens(slo: Slo, ev: Evidence, faults: Sequence[FaultRecord]) -> SloResult:
    """The regressions' count; a Lease that never carried a token is said so (seed 002
    proposes the sequence number for later, contract C6 does not ask one: nothing regressed)."""
    result = evaluate(slo, _lease_tokens(ev, faults))
    if metrics.lease_tokens_kept(ev.timeline) is False:
        return dataclasses.replace(result, message=(
            f"{result.message}: no fencing token kept (leaseTransitions never written by the "
            "controller; seed 002 proposes a sequence number for later, not asked)"))
    return result


def _handover_gap(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return _worst(metrics.lease_handover_gap(ev.timeline, r) for r in faults)


def _non_linearizable(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return None if ev.history_check is None else ev.history_check.non_linearizable_keys


def _judge_history(slo: Slo, ev: Evidence, faults: Sequence[FaultRecord]) -> SloResult:
    """VOID under the traffic's minimum rate before the first fault, NO_DATA without a
    history or a check, else porcupine's verdict (``linearizability.judge``)."""
    if ev.history is None:
        return evaluate(slo, None)
    return linearizability.judge(slo, ev.history, ev.history_check, fault_at=ev.first_fault_at)


def _failed_admissions(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    return metrics.failed_admissions(ev.timeline, faults)


def _pdb_budget(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    deployed = ev.timeline.first("workloads_deployed")
    if deployed is None or int(deployed.detail.get("pdb_max_unavailable", "0")) < 1:
        return None
    return _worst(metrics.pdb_budget_exceeded(
        ev.timeline, r, [f"{ev.namespace}/{w}-" for w in workloads.WORKLOADS],
        int(deployed.detail["replicas"]), int(deployed.detail["pdb_max_unavailable"]))
        for r in faults)


def _each(metric: Callable[[Timeline, FaultRecord], float | None]) -> Compute:
    """The worst of ``metric`` over the faults judged."""
    def compute(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
        return _worst(metric(ev.timeline, r) for r in faults)
    return compute


def _reelection(ev: Evidence, faults: Sequence[FaultRecord]) -> float | None:
    """Over the faults that hit a zone holding a control-plane Lease (the others: none)."""
    figures_ = [f for r in faults
                if (f := zone_metrics.control_plane_reelection(ev.timeline, r)) is not None]
    return max(figures_) if figures_ else None


def unfenced(evidence: Evidence, *, expiry: bool = False) -> list[str]:
    """One line per audited replica delete made while it was not the Lease's holder of
    record by the API server's order (``expiry``: or its own Lease had run out) (for
    messages)."""
    found, _ = deletes_by_non_holders(evidence.deletions or [], evidence.lease_writes or [],
                                      users_prefix=evidence.replica_prefix, expiry=expiry)
    return [u.describe() for u in found]


_NODES = frozenset({Effect.NODES_NOT_READY})
_NONE: frozenset[Effect] = frozenset()

FIGURES: dict[str, Figure] = {
    "not_ready_detection": Figure(_NODES, _not_ready),
    "force_delete_after_not_ready": Figure(_NODES, _force_delete),
    "statefulset_recovery": Figure(_NODES, _statefulset),
    "pods_running_twice": Figure(_NODES, _twice),
    "lease_failover": Figure(frozenset({Effect.CONTROLLER_LEADER_LOST}), _failover),
    # a zone outage that takes the controller's leader and webhook replicas with it
    "zone_lease_failover": Figure(_NODES, _failover),
    "zone_force_delete_with_failover": Figure(_NODES, _zone_failover),
    "failed_admissions_once_detected": Figure(_NODES, _zone_admissions),
    "etcd_write_error_window": Figure(frozenset({Effect.ETCD_MEMBERS_DOWN}), _write_window),
    "lost_acknowledged_writes": Figure(_NONE, _lost_writes),
    # the Lease model (measure.lease): who could act when
    "deletes_by_non_holders": Figure(_NONE, _audited_deletes(metrics.deletes_by_non_holders),
                                     offenders=unfenced),
    "deletes_outside_lease": Figure(_NONE, _audited_deletes(metrics.deletes_outside_lease),
                                    offenders=functools.partial(unfenced, expiry=True)),
    "lease_overlaps": Figure(_NONE, _lease_overlaps),
    "lease_token_regressions": Figure(_NONE, _lease_tokens, _judge_tokens),
    "lease_handover_gap": Figure(frozenset({Effect.CONTROLLER_LEADER_LOST}), _handover_gap),
    # the register history of the run's traffic, checked by porcupine
    "non_linearizable_keys": Figure(_NONE, _non_linearizable, _judge_history),
    # failures inside these faults' windows are expected (the webhook or the API is down)
    "failed_admissions": Figure(frozenset({Effect.WEBHOOK_DOWN, Effect.CONTROL_PLANE_DOWN,
                                           Effect.ETCD_QUORUM_LOST}), _failed_admissions),
    "pdb_budget_exceeded": Figure(frozenset({Effect.NODES_DRAINED}), _pdb_budget),
    # a zone's control plane down, isolated or slowed (zoneproof.faults.zones)
    "etcd_leader_reelection": Figure(frozenset({Effect.ETCD_LEADER_CHANGED}),
                                     _each(zone_metrics.etcd_leader_reelection)),
    "control_plane_reelection": Figure(frozenset({Effect.CONTROL_PLANE_DOWN,
                                                  Effect.ETCD_MEMBERS_DOWN}), _reelection),
    "member_writes_acknowledged": Figure(frozenset({Effect.ETCD_MEMBERS_DOWN}),
                                         _each(zone_metrics.member_writes_acknowledged)),
    "writes_after_zone_returned": Figure(frozenset({Effect.ETCD_QUORUM_LOST}),
                                         _each(zone_metrics.writes_after_zone_returned)),
    "write_latency_p99": Figure(frozenset({Effect.LINKS_SLOWED}),
                                _each(zone_metrics.write_latency_p99)),
    "etcd_leader_changes": Figure(frozenset({Effect.LINKS_SLOWED}),
                                  _each(zone_metrics.etcd_leader_changes)),
    "control_plane_leader_changes": Figure(frozenset({Effect.LINKS_SLOWED}),
                                           _each(zone_metrics.control_plane_leader_changes)),
    # the cluster DNS down (zoneproof.faults.dns)
    "names_resolved_again": Figure(frozenset({Effect.NAMES_UNRESOLVED}),
                                   _each(metrics.names_resolved_again)),
}


RUNTIME_METRICS = frozenset({"pods_running_twice"})
"""Metrics read from the nodes' container runtimes (``measure.PodRuntimeRecorder``): a run
records them only when it judges one."""

SCALE_METRICS = frozenset({"scale_reaction_p99", "scale_completion_to_limit"})
"""Metrics the scale profile measures on a bed of its own (``bench.scale.outage_at_scale``),
not from a chaos run's evidence: ``compute`` has no figure for them."""


def compute(metric: str, evidence: Evidence) -> float | None:
    """The figure for ``metric`` (None when unknown to zoneproof or not measurable)."""
    figure = FIGURES.get(metric)
    if figure is None:
        return None
    return figure.compute(evidence, evidence.faults_causing(figure.effects))


def result(slo: Slo, evidence: Evidence) -> SloResult:
    """``slo``'s result from ``evidence``: its figure's own judgement where it has one, else
    the figure's number against the bound (an unknown metric: NO_DATA)."""
    figure = FIGURES.get(slo.metric)
    if figure is not None and figure.judge is not None:
        return figure.judge(slo, evidence, evidence.faults_causing(figure.effects))
    return evaluate(slo, compute(slo.metric, evidence))


def offenders(slos: Iterable[Slo], evidence: Evidence) -> list[str]:
    """One line per thing the figures of ``slos`` counted against them (e.g. each audited
    delete made outside a Lease), each line once, in ``FIGURES`` order."""
    metrics_judged = {slo.metric for slo in slos}
    lines: list[str] = []
    for metric, figure in FIGURES.items():
        if metric in metrics_judged and figure.offenders is not None:
            lines += [line for line in figure.offenders(evidence) if line not in lines]
    return lines
