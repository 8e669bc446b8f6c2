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
from pathlib import Path
from typing import Any

import allure
import pytest
from chaoslib.experiment import ensure_experiment_is_valid, run_experiment
from chaoslib.loader import load_experiment
from zoneproof_fixtures.settings import Settings

from zoneproof.chaos import control
from zoneproof.cluster.interface import Cluster
from zoneproof.components.controllers import REFERENCE_COMMAND, ControllerSettings
from zoneproof.report import summary
from zoneproof.slo import judge

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("chaos")]
EXPERIMENTS = [pytest.param(p, id=p.stem) for p in sorted(Path(__file__).parent.glob("*.yaml"))]


def _overrides(bed: Cluster, settings: ControllerSettings, workdir: Path,
               slo_file: Path | None) -> dict[str, Any]:
    """Configuration that points an experiment at ``bed`` and the controller under test."""
    return {"zoneproof_backend": "local", "zoneproof_cluster": bed.name,
            "zoneproof_slo_file": str(slo_file or ""),
            "zoneproof_workdir": str(workdir), "zoneproof_controller_variant": settings.variant,
            "zoneproof_controller_command": "" if settings.command == REFERENCE_COMMAND
            else settings.command, "zoneproof_selector": settings.selector,
            "zoneproof_lease": f"{settings.lease_namespace}/{settings.lease_name}"}


def _attach(journal_path: Path, recorded: dict[str, Any]) -> None:
    allure.attach.file(str(journal_path), name="chaostoolkit journal",
                       attachment_type=allure.attachment_type.JSON)
    kinds = {".png": allure.attachment_type.PNG, ".svg": allure.attachment_type.SVG}
    for plot in map(Path, recorded.get("plots", [])):
        allure.attach.file(str(plot), name=f"timeline{plot.suffix}", attachment_type=kinds[plot.suffix])


@pytest.mark.parametrize("path", EXPERIMENTS)
def test_experiment(path: Path, module_bed: Cluster, zp_settings: Settings,
                    experiment_workdir: Path, record_property: Callable[[str, object], None]
                    ) -> None:
    workdir = experiment_workdir
    experiment = load_experiment(str(path))
    ensure_experiment_is_valid(experiment)
    # set, not passed as experiment_vars: chaoslib drops vars the experiment does not declare
    experiment.setdefault("configuration", {}).update(
        _overrides(module_bed, zp_settings.controller, workdir, zp_settings.slo_file))
    journal: dict[str, Any] = run_experiment(experiment)
    journal_path = workdir / "journal.json"
    journal_path.write_text(json.dumps(journal, indent=1, default=str))
    results = control.slo_results(journal)
    for result in results:
        record_property(*summary.slo_property(result.name, str(result.status), result.observed,
                                              result.threshold, result.unit))
    print("\n".join(r.message for r in results))
    recorded = journal.get(control.JOURNAL_KEY) or {}
    _attach(journal_path, recorded)
    problems = recorded.get("problems", [])
    rogue = "".join(f"\n  {line}" for line in recorded.get("unfenced_deletes", []))
    verdict = judge(journal, results)
    assert control.JOURNAL_KEY in journal, "the zoneproof control did not record this run"
    assert verdict.passed and not problems, (
        f"{path.name}: {verdict.summary()}{rogue}\nleft behind: {problems}\njournal: "
        f"{journal_path}")
