"""Every registered fault kind walks through figures, the effect check, the verdict and the
reports: a kind with no effect, an effect nothing observes, or a record a figure or plot
cannot take fails here, not as a silent NO_DATA in a chaos run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from zoneproof.cluster.spec import Timings
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.faults import Effect, FaultRecord, registry
from zoneproof.faults.effects import OBSERVATIONS, StatedTimings
from zoneproof.faults.zones import link_target, parse_link_target
from zoneproof.measure import Timeline
from zoneproof.report import artefacts
from zoneproof.slo import Evidence, effect_checks, figures, judge

TimelineOf = Callable[[list[tuple[float, str, str, dict[str, str]]]], Timeline]

Row = tuple[float, str, str, dict[str, str]]


TIMINGS = StatedTimings.of(Timings(), ControllerSettings(namespaces=()))

#: What the recorders write when an effect happens to ``targets`` (injected at 10 s).
WITNESSES: dict[Effect, Callable[[tuple[str, ...]], list[Row]]] = {
    Effect.KUBELETS_STOPPED: lambda ts: [(5, "node_heartbeat", t, {}) for t in ts] + [
        (20, "node_heartbeat", "another-node", {})],
    Effect.ETCD_LEADER_CHANGED: lambda ts: [(11.5, "etcd_leader", "etcd",
                                             {"leader": "another-member"})],
    Effect.NODES_NOT_READY: lambda ts: [(12, "node_ready", t, {"status": "Unknown"}) for t in ts],
    Effect.ETCD_MEMBERS_DOWN: lambda ts: [(11, "etcd_member", t, {"healthy": "False"})
                                          for t in ts],
    Effect.ETCD_QUORUM_LOST: lambda ts: [(12, "etcd_member", t, {"healthy": "False"})
                                         for t in ts],
    Effect.CONTROL_PLANE_DOWN: lambda ts: [
        (11, "process_alive", t, {"alive": "False"}) for t in ts] + [
        (11, "apiserver_ready", "kube-apiserver", {"ready": "False"})],
    Effect.CONTROLLER_LEADER_LOST: lambda ts: [(15, "lease_holder", "ns/lease",
                                                {"holder": "zp-hac-other"})],
    Effect.WEBHOOK_DOWN: lambda ts: [(12, "admission_failed", "ns/create",
                                      {"selected": "True"})],
    Effect.NODES_CORDONED: lambda ts: [(11, "node_schedulable", t, {"schedulable": "False"})
                                       for t in ts],
    Effect.NODES_DRAINED: lambda ts: [(2, "pod_scheduled", "ns/db-0", {"uid": "u0", "node": ts[0]}),
                                      (13, "pod_deleting", "ns/db-0", {"uid": "u0"})],
    # each link a round trip 0.01 s before, 2 x 0.1 s slower after (zone-a<->zone-b+100ms)
    Effect.LINKS_SLOWED: lambda ts: [
        row for t in ts for a, b, ms in [parse_link_target(t) or ("", "", 0)]
        for row in ((5.0, "link_rtt", b, {"source": a, "seconds": "0.01"}),
                    (12.0, "link_rtt", a, {"source": b, "seconds": f"{0.01 + 2 * ms / 1000}"}))],
    # the resolver pods' lookups fail (their targets are the CoreDNS Deployment, not them)
    Effect.NAMES_UNRESOLVED: lambda ts: [
        row for pod in ("ns/resolver-1", "ns/resolver-2")
        for row in ((2, "pod_readiness", pod, {"ready": "True"}),
                    (12, "pod_readiness", pod, {"ready": "False"}))],
}

#: Targets of a record of a kind that must cause the effect (default: two nodes).
TARGETS = {Effect.CONTROL_PLANE_DOWN: ("kube-apiserver",),
           Effect.LINKS_SLOWED: (link_target("zone-a", "zone-b", 100),)}


def test_every_effect_is_observed_and_witnessed() -> None:
    assert set(effect_checks.OBSERVERS) == set(Effect) == set(OBSERVATIONS) == set(WITNESSES)


def _record(kind: str, targets: tuple[str, ...]) -> FaultRecord:
    fault = registry.kinds()[kind]
    return FaultRecord(kind, tuple(sorted(fault.effects)), targets, 10.0, 30.0)


def _witnessed(timeline_of: TimelineOf, kind: str) -> tuple[FaultRecord, Timeline]:
    """A record of ``kind`` and a timeline on which each of its effects shows."""
    fault = registry.kinds()[kind]
    record = _record(kind, next((t for e, t in TARGETS.items() if e in fault.effects),
                                ("t1", "t2")))
    return record, timeline_of([row for effect in fault.effects
                                 for row in WITNESSES[effect](record.targets)]
                                + [(1, "lease_holder", "ns/lease", {"holder": "t1"})])


@pytest.mark.parametrize("kind", sorted(registry.kinds()))
def test_a_fault_kind_walks_through_figures_verdict_and_reports(
        kind: str, timeline_of: TimelineOf) -> None:
    fault = registry.kinds()[kind]
    assert fault.effects, f"{kind} declares no effect"
    record, witnessed = _witnessed(timeline_of, kind)
    evidence = Evidence(witnessed, (record,), "ns", lease="ns/lease", deletions=())

    checks = effect_checks.check(evidence.faults, witnessed.events, TIMINGS)
    assert {c.effect for c in checks} == {str(e) for e in fault.effects}
    assert all(c.effective for c in checks), [c.message for c in checks]
    for metric in figures.FIGURES:  # every figure takes every kind's record
        figures.compute(metric, evidence)

    unseen = effect_checks.check(evidence.faults, timeline_of([]).events, TIMINGS)
    verdict = judge({"status": "completed"}, (), unseen)
    assert {f.kind for f in verdict.findings} >= {"fault-not-effective"}

    assert FaultRecord.from_dict(record.to_dict()) == record


def test_every_kind_is_saved_and_plotted(tmp_path: Path, timeline_of: TimelineOf) -> None:
    """One run holding a record of every kind: faults.json reads back, the plot draws."""
    walked = [_witnessed(timeline_of, kind) for kind in registry.kinds()]
    records = [record for record, _ in walked]
    timeline = timeline_of([(e.t, e.kind, e.subject, e.detail)
                             for _, witnessed in walked for e in witnessed.events])
    saved = artefacts.save_run(tmp_path, timeline, records, title="every fault kind")
    assert [p.suffix for p in saved.plots] == [".png", ".svg"], "the plot takes every record"
    assert artefacts.load_faults(saved.faults) == records


def test_figures_select_faults_by_effect(timeline_of: TimelineOf) -> None:
    node = _record("zone-outage", ("a1",))
    etcd = _record("kill-etcd-member", ("etcd-0",))
    timeline = timeline_of([(12, "node_ready", "a1", {"status": "Unknown"}),
                             (11, "write_failed", "w", {}), (12.5, "write_acknowledged", "w", {})])
    evidence = Evidence(timeline, (node, etcd), "ns")
    assert evidence.faults_causing({Effect.NODES_NOT_READY}) == [node]
    assert figures.compute("not_ready_detection", evidence) == 2.0
    assert figures.compute("etcd_write_error_window", evidence) == 1.5
    assert figures.compute("lease_failover", evidence) is None, "no leader was killed"


def test_unknown_metric_and_missing_audit_have_no_figure(timeline_of: TimelineOf) -> None:
    evidence = Evidence(timeline_of([]), (), "ns")
    assert figures.compute("no_such_metric", evidence) is None
    assert figures.compute("deletes_by_non_holders", evidence) is None
    assert figures.compute("pdb_budget_exceeded", evidence) is None, "no drain, no figure"


def test_offenders_come_from_the_judged_slos_figures_not_their_names() -> None:
    """A delete outside any Lease is named once for each way an SLO counts it, whatever the
    SLO is called; an SLO of another figure names nothing."""
    import datetime as dt

    from zoneproof.measure import PodDeletion
    from zoneproof.slo import Slo

    timeline = Timeline()
    late = PodDeletion(dt.datetime.fromisoformat(timeline.start_wall) + dt.timedelta(seconds=1),
                       "zp-hac-0", "ns", "p", 200)
    evidence = Evidence(timeline, (), "ns", deletions=(late,), replica_prefix="zp-hac")
    holders = Slo(name="my-own-name", metric="deletes_by_non_holders", max=0, unit="count")
    fenced = Slo(name="another-name", metric="deletes_outside_lease", max=0, unit="count")
    other = Slo(name="concurrent-actors", metric="lease_overlaps", max=0, unit="count")
    assert len(figures.offenders([holders], evidence)) == 1
    assert "zp-hac-0 deleted ns/p" in figures.offenders([holders], evidence)[0]
    assert figures.offenders([fenced, holders], evidence) == figures.offenders([holders], evidence)
    assert figures.offenders([other], evidence) == []
