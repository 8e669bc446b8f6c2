"""The zoneproof chaostoolkit control: every experiment declares it; its activities act on
the run it opens::

    controls:
      - name: zoneproof
        provider: {type: python, module: zoneproof.chaos.control}

Before the experiment: open the run (``session.open_run``: its faults built and checked, a
refused experiment stops before its first action) and start the recorders. Before each
fault action: log its blast radius. After the experiment, however it went: close the run
(faults reverted, what it started stopped), save the artefacts, check the history, the
faults' effects and the SLOs, judge the run once (``slo.judge``; a signal that
interrupted it is recorded and makes it INTERRUPTED) and store all of it in
``journal["zoneproof"]``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from chaoslib.exceptions import InterruptExecution

from zoneproof import cluster as clusters
from zoneproof import errors
from zoneproof._util import reaping
from zoneproof.chaos import experiment, guard, session
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import controller
from zoneproof.faults.effects import StatedTimings
from zoneproof.measure import (
    CONTROL_PLANE_LEASES,
    ControlPlaneLeaseRecorder,
    HealthRecorder,
    LeaseRecorder,
    LinkRecorder,
    NodeHeartbeatRecorder,
    NodeReadyRecorder,
    PodReadinessRecorder,
    PodRecorder,
    PodRuntimeRecorder,
    Recorder,
    lease_writes,
    pod_deletions,
    read_records,
)
from zoneproof.report import artefacts
from zoneproof.report.journal import JOURNAL_KEY
from zoneproof.slo import (
    Evidence,
    Slo,
    SloResult,
    SloStatus,
    effect_checks,
    figures,
    judge,
    linearizability,
)
from zoneproof.traffic import resolver

__all__ = ["after_experiment_control", "before_activity_control", "before_experiment_control",
           "check_faults", "cleanup_control", "stated_timings"]

log = logging.getLogger("chaostoolkit")


def check_faults(experiment: Mapping[str, Any]) -> None:
    """ConfigError naming every ``inject_fault`` activity whose fault is not registered or
    whose parameters its kind does not take (``guard.FaultPlan.of``)."""
    guard.FaultPlan.of(experiment)


def _zone_recorders(run: experiment.ExperimentRun) -> list[Recorder]:
    """On a cluster whose zones are failure domains: kcm's and the scheduler's Lease holders
    and the round trips between zones."""
    if Capability.ZONES not in run.cluster.capabilities:
        return []
    return [*(ControlPlaneLeaseRecorder(run.api, "kube-system", name)
              for name in CONTROL_PLANE_LEASES), LinkRecorder(run.cluster)]


def _runtime_recorders(run: experiment.ExperimentRun) -> list[Recorder]:
    """For a run judging a figure of the nodes' runtimes (``RUNTIME_METRICS``) on a cluster
    whose nodes are machines zoneproof reaches (kind): the pods each node's runtime runs, so
    that one running on two nodes at once is seen (a docker exec per node every 2 s: only
    where judged)."""
    judged = {run.config.slo_set.get(name).metric for name in run.config.slos}
    if Capability.NODE_CONTAINERS not in run.cluster.capabilities or not (
            judged & figures.RUNTIME_METRICS):
        return []
    return [PodRuntimeRecorder(run.cluster, run.namespace)]


def before_experiment_control(context: Mapping[str, Any],
                              configuration: dict[str, Any] | None = None,
                              **kwargs: Any) -> None:
    """Open the run (the experiment's faults and needs checked) and start recording."""
    # chaoslib's own SIGTERM handler would end the run without saying which signal came:
    # ours (until chaoslib puts its caller's back) remember it for the verdict
    reaping.interrupt_on_terminate()
    try:
        run = session.open_run(context, configuration, log.info)
    except errors.ZoneproofError as exc:
        raise InterruptExecution(f"zoneproof: {exc}") from exc
    s = run.config
    recorders: list[Recorder] = [
        NodeReadyRecorder(run.api), NodeHeartbeatRecorder(run.api),
        PodRecorder(run.api, run.namespace, s.selector),
        PodReadinessRecorder(run.api, run.namespace, resolver.SELECTOR),
        LeaseRecorder(run.api, s.lease_namespace, s.lease_name),
        HealthRecorder(run.cluster), *_zone_recorders(run), *_runtime_recorders(run)]
    for recorder in recorders:
        recorder.start(run.timeline)
        run.recorders.append(recorder)
    log.info("zoneproof: recording cluster %s (workload namespace %s); SLOs: %s",
             run.cluster.name, run.namespace, ", ".join(s.slos) or "none")


def before_activity_control(context: Mapping[str, Any],
                            configuration: dict[str, Any] | None = None,
                            **kwargs: Any) -> None:
    """Log the blast radius of a fault action before it runs."""
    provider = context.get("provider") or {}
    if provider.get("module") != guard.ACTIONS_MODULE or provider.get("func") != guard.INJECT:
        return
    arguments = provider.get("arguments") or {}
    try:
        run = session.current()
        fault = run.plan.fault(str(arguments.get("fault", "")), arguments.get("parameters"))
        targets = run.injector.check(fault, run.fault_context())
    except errors.ZoneproofError as exc:
        log.warning("zoneproof: %s: cannot resolve its blast radius: %s", context.get("name"), exc)
        return
    run.timeline.add("blast_radius", fault.name, targets=",".join(targets))
    log.info("zoneproof: blast radius of %r (%s): %s", context.get("name"), fault.name,
             ", ".join(targets))


def _check_history(run: experiment.ExperimentRun) -> tuple[linearizability.CheckReport | None, str]:
    """porcupine's verdict on the run's register history (None: no history, or the check
    could not run: the reason)."""
    if run.history is None:
        return None, ""
    try:
        return linearizability.check(run.history, run.workdir, faults=run.injector.records), ""
    except errors.ZoneproofError as exc:
        log.error("zoneproof: the history check failed: %s", exc)
        return None, f"the history check failed: {exc}"


def _evidence(run: experiment.ExperimentRun, check: linearizability.CheckReport | None) -> Evidence:
    """What the closed run leaves to be judged by (audited deletes read now)."""
    audit = run.cluster.audit_log()
    deletions = writes = None
    if audit is not None:
        since = dt.datetime.fromisoformat(run.timeline.start_wall)
        records = read_records(audit)[0]
        deletions = tuple(d for d in pod_deletions(records, users_prefix=run.replica_prefix)
                          if d.namespace == run.namespace and d.at >= since)
        namespace, _, name = run.config.lease.partition("/")
        # every write of the Lease, also before the run: the holder at its start is one
        writes = tuple(lease_writes(records, namespace=namespace, name=name))
    return Evidence(run.timeline, tuple(run.injector.records), run.namespace,
                    lease=run.config.lease, deletions=deletions, lease_writes=writes,
                    replica_prefix=run.replica_prefix, history=run.history, history_check=check)


def stated_timings(run: experiment.ExperimentRun) -> StatedTimings:
    """The timings that bound the run's effects: the bed's (assumed upstream's for a
    cluster zoneproof did not make) and the HA controller's Lease timings."""
    made = clusters.backend_type(run.config.backend).traits.makes_clusters
    source = (f"{run.cluster.backend} cluster {run.cluster.name}'s spec" if made else
              "upstream defaults (a cluster zoneproof did not make states none), with the "
              "node-lease duration its node Leases state when node faults are allowed")
    return StatedTimings.of(run.cluster.timings,
                            controller.ControllerSettings(namespaces=(run.namespace,)),
                            source=source)


def _evaluate(run: experiment.ExperimentRun, evidence: Evidence) -> tuple[list[SloResult], list[Slo]]:
    """The result of each SLO the run names, and the SLOs judged (a name not in the SLO
    file is INVALID)."""
    received = reaping.interrupted_by()
    results, judged = [], []
    for name in run.config.slos:
        if received is not None:  # figures of a run cut short judge nothing
            results.append(SloResult(name, SloStatus.NOT_RUN, None, 0.0, "",
                                     f"{received.name} interrupted the run before it could "
                                     "be judged"))
            continue
        try:
            slo = run.config.slo_set.get(name)
        except errors.ConfigError as exc:
            results.append(SloResult(name, SloStatus.INVALID, None, 0.0, "", str(exc)))
            continue
        judged.append(slo)
        results.append(figures.result(slo, evidence))
    return results, judged


def _history_record(evidence: Evidence, error: str) -> dict[str, Any] | None:
    """The journal's account of the run's register history and its check."""
    if evidence.history is None:
        return None
    shown = linearizability.figures(evidence.history, evidence.history_check,
                                    fault_at=evidence.first_fault_at)
    return {**dataclasses.asdict(shown), "error": error,
            "keys": [{"key": k.key, "result": str(k.result), "operations": k.operations,
                      "seconds": k.seconds} for k in (evidence.history_check.keys
                                                      if evidence.history_check else ())]}


def after_experiment_control(context: Mapping[str, Any], state: dict[str, Any],
                             configuration: dict[str, Any] | None = None,
                             **kwargs: Any) -> None:
    """Close the run (revert, stop), save its artefacts, check its history, store the
    effect checks and SLO results in the journal; then end the zoneproof run it opened."""
    run = session.close_run()
    if run is None:
        return
    try:
        _record(run, context, state)
    finally:
        _end(run)


def cleanup_control() -> None:
    """chaoslib's last call, however the experiment ended: close a run still open."""
    run = session.close_run()
    if run is not None:
        log.warning("zoneproof: the chaos run was closed at cleanup (faults reverted)")
        _end(run)


def _end(run: experiment.ExperimentRun) -> None:
    for problem in run.end(log.info):
        log.error("zoneproof: %s", problem)


def _record(run: experiment.ExperimentRun, context: Mapping[str, Any], state: dict[str, Any]) -> None:
    check, error = _check_history(run)
    evidence = _evidence(run, check)
    timings = stated_timings(run)
    checks = effect_checks.check(evidence.faults, evidence.timeline.events, timings)
    results, judged = _evaluate(run, evidence)
    saved = artefacts.save_run(run.workdir, run.timeline, run.injector.records,
                               title=str(context.get("title", "")), slos=results)
    for effect in checks:
        (log.info if effect.effective else log.error)("zoneproof: fault effect: %s",
                                                      effect.message)
    for result in results:
        log.info("zoneproof: SLO %s %s: %s", result.name, result.status, result.message)
    for problem in run.problems:
        log.error("zoneproof: %s", problem)
    rogue = figures.offenders(judged, evidence)
    for line in rogue:
        log.error("zoneproof: unfenced delete: %s", line)
    state[JOURNAL_KEY] = {
        "cluster": run.cluster.name, "cluster_identity": run.identity,
        "namespace": run.namespace, "workdir": str(run.workdir),
        "timeline": str(saved.timeline), "plots": [str(p) for p in saved.plots],
        "timings": timings.to_dict(),
        "faults": [r.to_dict() for r in evidence.faults],
        "effects": [c.to_dict() for c in checks],
        "history": _history_record(evidence, error),
        "artefacts": [str(p) for p in artefacts.history_files(run.workdir)],
        "problems": list(run.problems),
        "unfenced_deletes": rogue,
        "slos": [r.to_dict() for r in results],
        "interrupted_by": received.name if (received := reaping.interrupted_by()) else None,
    }
    verdict = judge(state, results, checks)
    state[JOURNAL_KEY]["verdict"] = verdict.to_dict()
    log.info("zoneproof: verdict %s", verdict.summary())
