"""The zoneproof chaostoolkit control: record the run, bound its faults, judge its SLOs.

Declare it in an experiment::

    controls:
      - name: zoneproof
        provider: {type: python, module: zoneproof.chaos.control}

Before the experiment it checks the cluster can take every fault the experiment holds
(``guard.check``: a refused experiment stops before its first action, status
"interrupted", exit 1), opens a run (cluster, Timeline, Injector) and starts the
recorders (node readiness, the run's workload pods, the controller Lease, API server and
etcd health). Before each fault action it logs the blast radius. After the experiment
(after the rollbacks, also on failure or Ctrl-C) it reverts every fault still active,
stops what the run started, saves the timeline and its plot (PNG, SVG), computes the SLOs named by
``configuration.zoneproof_slos`` and stores them in ``journal["zoneproof"]``.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import logging
from collections.abc import Mapping
from typing import Any

from chaoslib.exceptions import InterruptExecution

from zoneproof import errors
from zoneproof.chaos import actions, figures, guard, session
from zoneproof.chaos.settings import Settings
from zoneproof.measure import HealthRecorder, LeaseRecorder, NodeReadyRecorder, PodRecorder
from zoneproof.report import plots
from zoneproof.slo import SloResult, SloStatus, evaluate, judge, load_slos

__all__ = ["after_experiment_control", "before_activity_control", "before_experiment_control",
           "slo_results"]

log = logging.getLogger("chaostoolkit")
JOURNAL_KEY = "zoneproof"
_ACTIONS_MODULE = "zoneproof.chaos.actions"


def before_experiment_control(context: Mapping[str, Any],
                              configuration: dict[str, Any] | None = None,
                              **kwargs: Any) -> None:
    """Check the experiment's needs, open the run and start recording."""
    guard.begin(log.info)
    try:
        guard.check(context, session.find_cluster(Settings.from_configuration(configuration)))
    except errors.ZoneproofError as exc:
        raise InterruptExecution(f"zoneproof: {exc}") from exc
    run = session.open_run(configuration)
    s = run.settings
    for recorder in (NodeReadyRecorder(run.api), PodRecorder(run.api, run.namespace, s.selector),
                     LeaseRecorder(run.api, s.lease_namespace, s.lease_name),
                     HealthRecorder(run.cluster)):
        recorder.start(run.timeline)
        run.recorders.append(recorder)
    log.info("zoneproof: recording cluster %s (workload namespace %s); SLOs: %s",
             run.cluster.name, run.namespace, ", ".join(s.slos) or "none")


def before_activity_control(context: Mapping[str, Any],
                            configuration: dict[str, Any] | None = None,
                            **kwargs: Any) -> None:
    """Log the blast radius of a fault action before it runs."""
    provider = context.get("provider") or {}
    if provider.get("module") != _ACTIONS_MODULE:
        return
    run = session.current(configuration)
    try:
        fault = actions.planned_fault(run, provider.get("func", ""),
                                      provider.get("arguments") or {})
        if fault is None:
            return
        targets = run.injector.check(fault)
    except errors.ZoneproofError as exc:
        log.warning("zoneproof: %s: cannot resolve its blast radius: %s", context.get("name"), exc)
        return
    run.timeline.add("blast_radius", fault.name, targets=",".join(targets))
    log.info("zoneproof: blast radius of %r (%s): %s", context.get("name"), fault.name,
             ", ".join(targets))


def _evaluate(run: session.Run) -> list[SloResult]:
    slos = load_slos(run.settings.slo_file)
    results = []
    for name in run.settings.slos:
        try:
            slo = slos.get(name)
        except errors.ConfigError as exc:
            results.append(SloResult(name, SloStatus.INVALID, None, 0.0, "", str(exc)))
            continue
        results.append(evaluate(slo, figures.compute(slo.metric, run)))
    return results


def after_experiment_control(context: Mapping[str, Any], state: dict[str, Any],
                             configuration: dict[str, Any] | None = None,
                             **kwargs: Any) -> None:
    """Close the run (revert, stop), save the timeline, store SLO results in the journal."""
    try:
        _close(context, state)
    finally:
        for problem in guard.end(log.info):
            log.error("zoneproof: %s", problem)


def _close(context: Mapping[str, Any], state: dict[str, Any]) -> None:
    run = session.close_run()
    if run is None:
        return
    timeline_path = run.workdir / "timeline.json"
    run.timeline.save(timeline_path)
    faults = [dataclasses.asdict(r) for r in run.injector.records]
    (run.workdir / "faults.json").write_text(json.dumps(faults, indent=1))
    try:
        figures_written = [str(p) for p in plots.plot_timeline(
            run.timeline.events, run.injector.records, run.workdir / "timeline",
            title=str(context.get("title", "")))]
    except Exception as exc:  # a plot is a report, not a verdict: say so and go on
        log.warning("zoneproof: timeline plot failed: %s: %s", type(exc).__name__, exc)
        figures_written = []
    results = _evaluate(run)
    for result in results:
        log.info("zoneproof: SLO %s %s: %s", result.name, result.status, result.message)
    for problem in run.problems:
        log.error("zoneproof: %s", problem)
    rogue = figures.unfenced(run) if "concurrent-actors" in run.settings.slos else []
    for line in rogue:
        log.error("zoneproof: unfenced delete: %s", line)
    state[JOURNAL_KEY] = {
        "cluster": run.cluster.name, "cluster_identity": run.identity,
        "namespace": run.namespace, "workdir": str(run.workdir),
        "timeline": str(timeline_path), "plots": figures_written, "faults": faults,
        "problems": list(run.problems),
        "unfenced_deletes": rogue,
        "slos": [dataclasses.asdict(r) for r in results],
    }
    verdict = judge(state, results)
    state[JOURNAL_KEY]["verdict"] = verdict.summary()
    log.info("zoneproof: verdict %s", verdict.summary())


def slo_results(journal: Mapping[str, Any]) -> list[SloResult]:
    """The SLO results this control stored in ``journal``."""
    return [SloResult(r["name"], SloStatus(r["status"]), r["observed"], r["threshold"],
                      r["unit"], r["message"])
            for r in (journal.get(JOURNAL_KEY) or {}).get("slos", [])]


def _close_on_exit() -> None:
    run = session.close_run()
    if run is not None:
        log.warning("zoneproof: the chaos run was closed at exit (faults reverted)")
    for problem in guard.end(log.info):
        log.error("zoneproof: %s", problem)


atexit.register(_close_on_exit)
