"""Every experiment in chaos/*.yaml, run in-process by chaoslib against the module's bed.

The run passes only on the strict verdict (``slo.judge``: completed, steady state met
before and after, every activity and rollback succeeded, every declared SLO PASS) and
with nothing left behind when the zoneproof control closed the run. SLO figures go to
the JUnit properties; journals and timelines stay in the test's tmp dir.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chaoslib.experiment import ensure_experiment_is_valid, run_experiment
from chaoslib.loader import load_experiment

from zoneproof.chaos import control
from zoneproof.cluster.interface import Cluster
from zoneproof.components.controllers import REFERENCE_COMMAND, ControllerSettings
from zoneproof.slo import judge

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("chaos")]
#: Known findings, not harness bugs: the run may fail for the reason given (xfail, not strict).
KNOWN_RACES = {
    "kubelet-stop-nodes-across-zones": (
        "race in the reference controller: a force-deleted StatefulSet pod can be rescheduled "
        "onto the second stopped node after that node's NotReady transition but before kcm "
        "taints it NoSchedule; no transition follows, so the pod stays stuck there"),
}
EXPERIMENTS = [
    pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(reason=KNOWN_RACES[p.stem], strict=False)]
                 if p.stem in KNOWN_RACES else [])
    for p in sorted(Path(__file__).parent.glob("*.yaml"))
]


def _overrides(bed: Cluster, settings: ControllerSettings, workdir: Path) -> dict[str, Any]:
    """Configuration that points an experiment at ``bed`` and the controller under test."""
    return {"zoneproof_backend": bed.backend, "zoneproof_cluster": bed.name,
            "zoneproof_workdir": str(workdir), "zoneproof_controller_variant": settings.variant,
            "zoneproof_controller_command": "" if settings.command == REFERENCE_COMMAND
            else settings.command, "zoneproof_selector": settings.selector,
            "zoneproof_lease": f"{settings.lease_namespace}/{settings.lease_name}"}


@pytest.mark.parametrize("path", EXPERIMENTS)
def test_experiment(path: Path, module_bed: Cluster, controller_settings: ControllerSettings,
                    tmp_path: Path, record_property: Callable[[str, object], None]) -> None:
    experiment = load_experiment(str(path))
    ensure_experiment_is_valid(experiment)
    # set, not passed as experiment_vars: chaoslib drops vars the experiment does not declare
    experiment.setdefault("configuration", {}).update(
        _overrides(module_bed, controller_settings, tmp_path))
    journal: dict[str, Any] = run_experiment(experiment)
    (tmp_path / "journal.json").write_text(json.dumps(journal, indent=1, default=str))
    results = control.slo_results(journal)
    for result in results:
        record_property(f"slo:{result.name}", json.dumps(
            {"status": str(result.status), "observed": result.observed,
             "threshold": result.threshold, "unit": result.unit}))
    print("\n".join(r.message for r in results))
    recorded = journal.get(control.JOURNAL_KEY) or {}
    problems = recorded.get("problems", [])
    rogue = "".join(f"\n  {line}" for line in recorded.get("unfenced_deletes", []))
    verdict = judge(journal, results)
    assert control.JOURNAL_KEY in journal, "the zoneproof control did not record this run"
    assert verdict.passed and not problems, (
        f"{path.name}: {verdict.summary()}{rogue}\nleft behind: {problems}\njournal: "
        f"{tmp_path / 'journal.json'}")
