"""Generated schedules judged by the executable model of the seeds (the README's "generated
suite"; ``zoneproof.conformance.ha_controller``).

A seeded batch of schedules (hypothesis) runs on a private bed, several side by side: node
Ready flips, fences, cordons, pods of every kind, replicas started, SIGTERMed, SIGKILLed
and frozen. The API server's audit log is the record; the model says which deletions each
history required, by when, and which it forbade, each rule citing its seed sentence. The
first failure is shrunk on the bed to the fewest events that still break its rule, printed
with the seed that replays the batch and a case file that replays it alone. What the record
cannot decide is no verdict (NO_DATA, a fail of the strict verdict), never a pass.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
from zoneproof_fixtures import settings as zp

from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.source import IN_CLUSTER
from zoneproof.conformance.ha_controller import coverage, executor, labels, suite
from zoneproof.conformance.ha_controller.executor import ModelBed, Outcome
from zoneproof.conformance.ha_controller.schedule import Schedule
from zoneproof.report import junit

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("ha_controller_model"),
              pytest.mark.expected_seconds(suite.Budget.default().seconds + 45)]  # + bed, drain

REACTION_S = 10.0
"""NotReady -> matching pods gone (C7; the hand suite's REACTION_BOUND_S)."""


@pytest.fixture(autouse=True)
def restore_nodes() -> None:
    """The schedules' nodes are the executor's own (it removes them); the bed's kwok nodes
    are left alone, so nothing is restored."""


def _figure(record_property: Callable[[str, object], None], name: str, value: float) -> None:
    record_property(*junit.figure_property(name, value))
    print(f"{name} = {value:.3f}")


def _schedules(settings: zp.Settings, budget: suite.Budget, run_seed: int) -> list[Schedule]:
    if settings.controller_schedule is not None:
        return [Schedule.load(settings.controller_schedule)]
    return budget.draw(run_seed)


def _with_selector(settings: ControllerSettings, run_seed: int) -> ControllerSettings:
    """``settings`` with a selector of ``labels.SHAPES`` drawn for the batch, unless the
    run names one or the component fixes its own."""
    told = next(o for o in Kind.CONTROLLER.spec.settings if o.key == "selector")
    if told.given(settings.selector) or "selector" in settings.component.fixed():
        return settings
    return dataclasses.replace(settings, selector=labels.drawn(run_seed))


def _save(outcome: Outcome, where: Path, stem: str) -> tuple[Path, Path]:
    where.mkdir(parents=True, exist_ok=True)
    case = outcome.schedule.save(where / f"{stem}.schedule.json")
    return case, outcome.history.save(where / f"{stem}.history.json")


def _failure(first: Outcome, shrunk: suite.Shrunk, run_seed: int, *, case: Path,
             history: Path, logs: Path) -> str:
    violation = shrunk.outcome.verdict.first or first.verdict.first
    assert violation is not None
    schedule = shrunk.outcome.schedule
    others = [v.describe() for v in shrunk.outcome.verdict.violations if v is not violation]
    return "\n".join([
        f"the controller broke the model on a generated schedule: {violation.describe()}",
        "",
        f"shrunk to {schedule.size} items (from {first.schedule.size}) in {shrunk.runs} "
        f"re-runs, {shrunk.seconds:.0f}s"
        f"{'' if shrunk.complete else ' (out of time: maybe not the smallest)'}:",
        schedule.describe(),
        *(["", "other violations of the shrunk schedule:", *others[:5]] if others else []),
        *([f"events that could not take effect: {shrunk.outcome.skipped}"]
          if shrunk.outcome.skipped else []),
        "",
        f"replay the batch: --zp-seed {run_seed}; this case alone: "
        f"--zp-controller-schedule {case}",
        f"its history (the audit log's record): {history}; replica logs: {logs}"])


def _coverage(outcomes: list[Outcome], settings: ControllerSettings,
              record_property: Callable[[str, object], None]) -> dict[str, int]:
    """Print and record, per model rule, how many schedules run exposed it and in how many
    histories the checker decided it; the latter, per rule."""
    setup = executor.model_setup(settings, ("w1", "w2"), ("0", "1"), reaction_s=REACTION_S)
    exposing = coverage.report((o.schedule for o in outcomes), setup)
    decided = {rule: sum(1 for o in outcomes if o.verdict.judged.get(rule)) for rule in exposing}
    for rule in exposing:
        record_property(f"coverage_{rule}", f"exposed {exposing[rule]}, decided {decided[rule]}"
                        f" of {len(outcomes)}")
    print(coverage.format_report(exposing, len(outcomes), decided))
    return decided


def test_generated_schedules(
        *, module_bed: Cluster, controller_settings: ControllerSettings,
        zp_settings: zp.Settings, zp_seed: int, tmp_path: Path, report_dir: Path | None,
        record_property: Callable[[str, object], None],
        no_verdict: Callable[[str], NoReturn]) -> None:
    """Every generated schedule's history satisfies the model: no forbidden deletion or
    Lease write, every required deletion and Lease event within its bound."""
    if controller_settings.component.mode == IN_CLUSTER:
        pytest.skip("the schedules freeze and thaw replicas (SIGSTOP): host processes only "
                    "(run it with --zp-components host)")
    if (reason := facets.audit_unmet(module_bed, what="the generated schedules' record")) \
            is not None:
        no_verdict(reason)
    if (reason := facets.unmet(module_bed, [Capability.CONTROL_PLANE], what="the generated "
                               "schedules (they stop kube-controller-manager)")) is not None:
        no_verdict(reason)
    budget = suite.Budget.thorough() if zp_settings.thorough else suite.Budget.default()
    run_seed = zp_seed
    record_property("seed", str(run_seed))
    print(f"seed = {run_seed} (replay: --zp-seed {run_seed}"
          f"{' --zp-thorough' if zp_settings.thorough else ''})")
    schedules = _schedules(zp_settings, budget, run_seed)
    controller_settings = _with_selector(controller_settings, run_seed)
    print(f"selector = {controller_settings.selector!r}")
    record_property("selector", controller_settings.selector)
    selector = labels.parse(controller_settings.selector)
    bed = ModelBed(module_bed, controller_settings, tmp_path / "bed", slots=budget.slots).open()
    try:
        def runner(schedule: Schedule, slot: int) -> Outcome:
            return executor.run(schedule, bed, bed.slots[slot], controller_settings,
                                selector=selector, reaction_s=REACTION_S, progress=print)

        started = time.monotonic()
        outcomes = suite.run_batch(schedules, runner, slots=budget.slots,
                                   seconds=budget.seconds)
        wall = time.monotonic() - started
        _figure(record_property, "schedules_run", len(outcomes))
        _figure(record_property, "schedules_per_minute", 60 * len(outcomes) / max(wall, 1e-9))
        _figure(record_property, "batch_wall_seconds", wall)
        _figure(record_property, "requirements_checked",
                sum(o.verdict.required for o in outcomes))
        decided = _coverage(outcomes, controller_settings, record_property)
        where = report_dir / "controller-cases" if report_dir else tmp_path / "cases"
        failed = [o for o in outcomes if o.verdict.violations]
        if failed:
            first = failed[0]
            shrunk = suite.shrink(first, runner, slots=budget.slots,
                                  seconds=budget.shrink_seconds)
            _figure(record_property, "shrink_seconds", shrunk.seconds)
            case, history = _save(shrunk.outcome, where, f"seed-{run_seed}")
            _save(first, where, f"seed-{run_seed}-unshrunk")
            pytest.fail(_failure(first, shrunk, run_seed, case=case, history=history,
                                 logs=tmp_path / "bed"), pytrace=False)
        if len(outcomes) < len(schedules):
            print(f"{len(schedules) - len(outcomes)} schedule(s) left out: the batch's "
                  f"{budget.seconds:g}s were spent")
        unjudged = [r for r, n in decided.items() if not n]
        if unjudged and zp_settings.controller_schedule is None:  # a case alone asks less
            no_verdict(f"rule(s) {', '.join(unjudged)} decided in none of the "
                       f"{len(outcomes)} schedules run (seed {run_seed}): the run did not "
                       "judge every contract row")
        undecided = [(o, u) for o in outcomes for u in o.verdict.undecided]
        if undecided:
            outcome, what = undecided[0]
            _save(outcome, where, f"seed-{run_seed}-undecided")
            no_verdict(f"{len(undecided)} item(s) the record cannot decide, "
                        f"e.g. {what} (seed {run_seed})")
        print(json.dumps({"seed": run_seed, "schedules": len(outcomes),
                          "required": sum(o.verdict.required for o in outcomes)}))
    finally:
        bed.close()
