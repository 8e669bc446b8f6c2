"""The zoneproof chaostoolkit control: record the run, bound its faults, judge its SLOs.

Declare it in an experiment::

    controls:
      - name: zoneproof
        provider: {type: python, module: zoneproof.chaos.control}

Before the experiment it checks every ``inject_fault`` activity against the fault
registry (an unknown fault or parameter interrupts the run before anything is touched)
and that the cluster can take every fault the experiment holds (``guard.check``: a
refused experiment stops before its first action, status "interrupted", exit 1), opens
a run (cluster, Timeline, Injector) and starts the recorders (node readiness, cordons and
kubelet heartbeats, the run's workload pods, the controller Lease and its renewals, API
server, etcd and control-plane process health). Before each fault action it logs the
blast radius. After the experiment (after the rollbacks, also on failure or Ctrl-C) it
reverts every fault still active, stops what the run started (the register traffic saves
its history), has ``report.artefacts`` save the timeline, fault records and plots, checks
the history with porcupine, checks that every fault took effect within the bounds the
bed's timings give, computes the SLOs named by ``configuration.zoneproof_slos`` from the
run's ``slo.Evidence`` and stores all of it in ``journal["zoneproof"]``.
"""

from __future__ import annotations

import atexit
import dataclasses
import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from chaoslib.exceptions import InterruptExecution

from zoneproof import cluster as clusters
from zoneproof import errors
from zoneproof.chaos import actions, guard, session
from zoneproof.chaos.settings import Settings
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import controller
from zoneproof.faults.effects import StatedTimings
from zoneproof.measure import (
    ControlPlaneLeaseRecorder,
    HealthRecorder,
    LeaseRecorder,
    LinkRecorder,
    NodeHeartbeatRecorder,
    NodeReadyRecorder,
    PodRecorder,
    Recorder,
    pod_deletions,
)
from zoneproof.report import artefacts
from zoneproof.report.journal import JOURNAL_KEY
from zoneproof.slo import (
    Evidence,
    SloResult,
    SloStatus,
    effects,
    figures,
    judge,
    linearizability,
)

__all__ = ["after_experiment_control", "before_activity_control", "before_experiment_control",
           "check_faults", "stated_timings"]

log = logging.getLogger("chaostoolkit")


def check_faults(experiment: Mapping[str, Any]) -> None:
    """ConfigError naming every ``inject_fault`` activity whose fault is not registered or
    whose parameters its kind does not take (chaoslib checks only the action's own)."""
    problems = []
    for name, provider in guard.actions_of(experiment):
        try:
            actions.planned_fault(provider.get("func", ""), provider.get("arguments") or {})
        except errors.ConfigError as exc:
            problems.append(f"activity {name!r}: {exc}")
    if problems:
        raise errors.ConfigError("; ".join(problems))


#: kube-system Leases of the control plane's leader-elected components.
CONTROL_PLANE_LEASES = ("kube-controller-manager", "kube-scheduler")


def _zone_recorders(run: session.Run) -> list[Recorder]:
    """On a cluster whose zones are failure domains: kcm's and the scheduler's Lease holders
    and the round trips between zones."""
    if Capability.ZONES not in run.cluster.capabilities:
        return []
    return [*(ControlPlaneLeaseRecorder(run.api, "kube-system", name)
              for name in CONTROL_PLANE_LEASES), LinkRecorder(run.cluster)]


def before_experiment_control(context: Mapping[str, Any],
                              configuration: dict[str, Any] | None = None,
                              **kwargs: Any) -> None:
    """Check the faults and the experiment's needs, open the run and start recording."""
    guard.begin(log.info)
    try:
        check_faults(context)
        guard.check(context, session.find_cluster(Settings.from_configuration(configuration)))
    except errors.ZoneproofError as exc:
        raise InterruptExecution(f"zoneproof: {exc}") from exc
    run = session.open_run(configuration)
    s = run.settings
    recorders: list[Recorder] = [
        NodeReadyRecorder(run.api), NodeHeartbeatRecorder(run.api),
        PodRecorder(run.api, run.namespace, s.selector),
        LeaseRecorder(run.api, s.lease_namespace, s.lease_name),
        HealthRecorder(run.cluster), *_zone_recorders(run)]
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
    if provider.get("module") != guard.ACTIONS_MODULE:
        return
    run = session.current(configuration)
    try:
        fault = actions.planned_fault(provider.get("func", ""), provider.get("arguments") or {})
        if fault is None:
            return
        targets = run.injector.check(fault, actions.fault_context(run))
    except errors.ZoneproofError as exc:
        log.warning("zoneproof: %s: cannot resolve its blast radius: %s", context.get("name"), exc)
        return
    run.timeline.add("blast_radius", fault.name, targets=",".join(targets))
    log.info("zoneproof: blast radius of %r (%s): %s", context.get("name"), fault.name,
             ", ".join(targets))


def _check_history(run: session.Run) -> tuple[linearizability.CheckReport | None, str]:
    """porcupine's verdict on the run's register history (None: no history, or the check
    could not run: the reason)."""
    if run.history is None:
        return None, ""
    try:
        return linearizability.check(run.history, run.workdir, faults=run.injector.records), ""
    except errors.ZoneproofError as exc:
        log.error("zoneproof: the history check failed: %s", exc)
        return None, f"the history check failed: {exc}"


def _evidence(run: session.Run, check: linearizability.CheckReport | None) -> Evidence:
    """What the closed run leaves to be judged by (audited deletes read now)."""
    audit = run.cluster.audit_log()
    deletions = None
    if audit is not None:
        since = dt.datetime.fromisoformat(run.timeline.start_wall)
        deletions = tuple(d for d in pod_deletions(audit, users_prefix=run.replica_prefix)
                          if d.namespace == run.namespace and d.at >= since)
    return Evidence(run.timeline, tuple(run.injector.records), run.namespace,
                    lease=run.settings.lease, deletions=deletions,
                    replica_prefix=run.replica_prefix, history=run.history, history_check=check)


def stated_timings(run: session.Run) -> StatedTimings:
    """The timings that bound the run's effects: the bed's (assumed upstream's for a
    cluster zoneproof did not make) and the HA controller's Lease timings."""
    made = clusters.backend_type(run.settings.backend).traits.makes_clusters
    source = (f"{run.cluster.backend} cluster {run.cluster.name}'s spec" if made else
              "upstream defaults (a cluster zoneproof did not make states none), with the "
              "node-lease duration its node Leases state when node faults are allowed")
    return StatedTimings.of(run.cluster.timings,
                            controller.ControllerSettings(namespaces=(run.namespace,)),
                            source=source)


def _evaluate(run: session.Run, evidence: Evidence) -> list[SloResult]:
    results = []
    for name in run.settings.slos:
        try:
            slo = run.settings.slo_set.get(name)
        except errors.ConfigError as exc:
            results.append(SloResult(name, SloStatus.INVALID, None, 0.0, "", str(exc)))
            continue
        results.append(figures.result(slo, evidence))
    return results


def _unfenced(slos: Sequence[str], evidence: Evidence) -> list[str]:
    """Lines naming the deletes the Lease SLOs the run judges found outside a Lease."""
    lines = figures.unfenced(evidence) if "concurrent-actors" in slos else []
    if "lease-fenced-actions" in slos:
        lines += [u for u in figures.unfenced(evidence, expiry=True) if u not in lines]
    return lines


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
    effect checks and SLO results in the journal; then close the zoneproof run
    ``guard.begin`` opened."""
    try:
        _close(context, state)
    finally:
        for problem in guard.end(log.info):
            log.error("zoneproof: %s", problem)


def _close(context: Mapping[str, Any], state: dict[str, Any]) -> None:
    run = session.close_run()
    if run is None:
        return
    check, error = _check_history(run)
    evidence = _evidence(run, check)
    timings = stated_timings(run)
    checks = effects.check(evidence.faults, evidence.timeline.events, timings)
    results = _evaluate(run, evidence)
    saved = artefacts.save_run(run.workdir, run.timeline, run.injector.records,
                               title=str(context.get("title", "")), slos=results)
    for effect in checks:
        (log.info if effect.effective else log.error)("zoneproof: fault effect: %s",
                                                      effect.message)
    for result in results:
        log.info("zoneproof: SLO %s %s: %s", result.name, result.status, result.message)
    for problem in run.problems:
        log.error("zoneproof: %s", problem)
    rogue = _unfenced(run.settings.slos, evidence)
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
    }
    verdict = judge(state, results, checks)
    state[JOURNAL_KEY]["verdict"] = verdict.summary()
    log.info("zoneproof: verdict %s", verdict.summary())


def _close_on_exit() -> None:
    run = session.close_run()
    if run is not None:
        log.warning("zoneproof: the chaos run was closed at exit (faults reverted)")
    for problem in guard.end(log.info):
        log.error("zoneproof: %s", problem)


atexit.register(_close_on_exit)
