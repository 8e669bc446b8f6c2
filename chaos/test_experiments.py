"""Every experiment in chaos/*.yaml, run in-process by chaoslib against the module's bed.

The run passes only on the strict verdict (``slo.judge``: completed, steady state met
before and after, every activity and rollback succeeded, every declared SLO PASS) and
with nothing left behind when the zoneproof control closed the run. SLO figures go to
the JUnit properties (and so to summary.json); the journal, timeline and its plots go to
``<--zp-report-dir>/chaos/<experiment>/`` (else the test's tmp dir) and to allure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import allure
import pytest
from chaoslib.experiment import ensure_experiment_is_valid, run_experiment
from chaoslib.loader import load_experiment
from zoneproof_fixtures.settings import Settings

from zoneproof.chaos import control
from zoneproof.cluster import backend_type
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.report import summary
from zoneproof.slo import SloResult, SloStatus, Verdict, judge

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("chaos")]
ROLLBACKS_ALWAYS = {"runtime": {"rollbacks": {"strategy": "always"}}}
EXPERIMENTS = [pytest.param(p, id=p.stem) for p in sorted(Path(__file__).parent.glob("*.yaml"))]


def _overrides(bed: Cluster, webhook: Component, controller: ControllerSettings, workdir: Path,
               slo_file: Path | None) -> dict[str, Any]:
    """Configuration that points an experiment at ``bed`` and the components under test."""
    # a user's cluster (existing backend) is found by its kubeconfig, destructive if allowed
    adopted = ({"zoneproof_kubeconfig": str(bed.kubeconfig),
                "zoneproof_allow_destructive": str(Capability.DESTRUCTIVE in bed.capabilities)}
               if backend_type(bed.backend).traits.needs_kubeconfig else {})
    return {**adopted, "zoneproof_backend": bed.backend, "zoneproof_cluster": bed.name,
            "zoneproof_slo_file": str(slo_file or ""), "zoneproof_workdir": str(workdir),
            "zoneproof_components": Components(webhook, controller.component).to_dict(),
            "zoneproof_selector": controller.selector,
            "zoneproof_lease": f"{controller.lease_namespace}/{controller.lease_name}"}


def _attach(journal_path: Path, recorded: dict[str, Any]) -> None:
    allure.attach.file(str(journal_path), name="chaostoolkit journal",
                       attachment_type=allure.attachment_type.JSON)
    kinds = {".png": allure.attachment_type.PNG, ".svg": allure.attachment_type.SVG}
    for plot in map(Path, recorded.get("plots", [])):
        allure.attach.file(str(plot), name=f"timeline{plot.suffix}", attachment_type=kinds[plot.suffix])


@dataclass(frozen=True, slots=True)
class Outcome:
    """One experiment run: its journal (saved), SLO results and strict verdict."""

    journal_path: Path
    results: list[SloResult]
    verdict: Verdict
    problems: list[str]
    unfenced: list[str]

    def explain(self) -> str:
        """The verdict's findings, rogue deletes and leftovers: what a failing test says."""
        rogue = "".join(f"\n  {line}" for line in self.unfenced)
        return (f"{self.verdict.summary()}{rogue}\nleft behind: {self.problems}\njournal: "
                f"{self.journal_path}")


def _run(path: Path, bed: Cluster, *, webhook: Component, controller: ControllerSettings,
         workdir: Path, slo_file: Path | None, record_property: Callable[[str, object], None]
         ) -> Outcome:
    """Run one experiment in-process with the zoneproof control; record its SLOs."""
    experiment = load_experiment(str(path))
    ensure_experiment_is_valid(experiment)
    # set, not passed as experiment_vars: chaoslib drops vars the experiment does not declare
    experiment.setdefault("configuration", {}).update(
        _overrides(bed, webhook, controller, workdir, slo_file))
    # rollbacks run whatever happened (chaoslib's default skips them when the hypothesis fails)
    journal: dict[str, Any] = run_experiment(experiment, settings=ROLLBACKS_ALWAYS)
    journal_path = workdir / "journal.json"
    journal_path.write_text(json.dumps(journal, indent=1, default=str))
    assert control.JOURNAL_KEY in journal, "the zoneproof control did not record this run"
    results = control.slo_results(journal)
    for result in results:
        record_property(*summary.slo_property(result.name, str(result.status), result.observed,
                                              result.threshold, result.unit))
    print("\n".join(r.message for r in results))
    recorded = journal[control.JOURNAL_KEY]
    _attach(journal_path, recorded)
    return Outcome(journal_path, results, judge(journal, results),
                   list(recorded.get("problems", [])), list(recorded.get("unfenced_deletes", [])))


@pytest.mark.parametrize("path", EXPERIMENTS)
def test_experiment(path: Path, module_bed: Cluster, zp_settings: Settings,
                    experiment_workdir: Path, record_property: Callable[[str, object], None]
                    ) -> None:
    run = _run(path, module_bed, webhook=zp_settings.components.webhook,
               controller=zp_settings.controller, workdir=experiment_workdir,
               slo_file=zp_settings.slo_file, record_property=record_property)
    assert run.verdict.passed and not run.problems, f"{path.name}: {run.explain()}"


#: (experiment, broken controller variant, the SLO that must catch it)
CAUGHT = [
    pytest.param(("zone-outage", "graceful-delete", "statefulset-pod-ready-elsewhere"),
                 id="zone-outage-graceful-delete"),
    pytest.param(("ha-controller-leader-sigkill", "no-leader-election", "concurrent-actors"),
                 id="leader-sigkill-no-leader-election"),
]


@pytest.mark.parametrize("case", CAUGHT)
def test_experiment_catches_a_broken_controller(
        case: tuple[str, str, str], module_bed: Cluster, zp_settings: Settings,
        tmp_path: Path) -> None:
    """The same experiment fails, naming the breached SLO, when the controller under test
    is started as its broken variant (conftest skips this when its source has no such
    variant)."""
    experiment, variant, slo = case
    broken = zp_settings.controller.with_component(
        zp_settings.controller.component.with_variant(variant))
    run = _run(Path(__file__).parent / f"{experiment}.yaml", module_bed,
               webhook=zp_settings.components.webhook, controller=broken, workdir=tmp_path,
               slo_file=None, record_property=lambda *_: None)
    assert not run.verdict.passed, f"{experiment} passed against the {variant} controller"
    breached = {r.name: r for r in run.results if r.status is not SloStatus.PASS}
    assert slo in breached, f"{slo} did not catch {variant}: {run.explain()}"
    assert slo in run.verdict.summary(), "the verdict names the breached SLO"
    assert not run.problems, f"rollback/cleanup failed: {run.problems}"
