"""Every experiment in chaos/ is valid for chaoslib and declares SLOs zoneproof can measure."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from chaoslib.exceptions import InvalidActivity, InvalidExperiment
from chaoslib.experiment import ensure_experiment_is_valid
from chaoslib.loader import load_experiment

from zoneproof import errors
from zoneproof.chaos import control
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.slo import figures

CHAOS = Path(__file__).resolve().parents[3] / "chaos"
EXPERIMENTS = sorted(CHAOS.glob("*.yaml"))
HISTORIES = [p for p in EXPERIMENTS if "func: start_history_traffic" in p.read_text()]


def _load(path: Path) -> dict[str, Any]:
    experiment: dict[str, Any] = load_experiment(str(path))
    return experiment


def test_there_are_experiments() -> None:
    names = {p.stem for p in EXPERIMENTS}
    assert {"zone-outage", "etcd-kill-leader", "etcd-quorum-loss",
            "ha-controller-leader-sigkill"} <= names


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_experiment_is_valid(path: Path) -> None:
    ensure_experiment_is_valid(_load(path))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_declared_slos_exist_and_are_measurable(path: Path) -> None:
    settings = ExperimentConfig.from_configuration(_load(path)["configuration"])
    for name in settings.slos:
        assert settings.slo_set.get(name).metric in figures.FIGURES, f"{path.name}: {name}"


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_faults_are_registered_with_their_parameters(path: Path) -> None:
    control.check_faults(_load(path))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_uses_the_control_and_has_rollbacks(path: Path) -> None:
    experiment = _load(path)
    modules = [c["provider"]["module"] for c in experiment.get("controls", [])]
    assert modules == ["zoneproof.chaos.control"]
    assert experiment["rollbacks"], f"{path.name} declares no rollbacks"


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
def test_the_history_traffic_starts_right_before_the_first_fault(path: Path) -> None:
    """``start_history_traffic`` returns once the last 4 s ran at the floor, and the guard
    judges the 4 s before the first fault: nothing may come between them (a writer started
    there with a 2 s pause once dropped the rate from 125 to 72 ops/s: VOID)."""
    method = _load(path)["method"]
    funcs = [a.get("provider", {}).get("func") for a in method]
    start = funcs.index("start_history_traffic")
    assert not method[start].get("pauses"), f"{path.name}: a pause after the traffic's start"
    assert funcs[start + 1] == "inject_fault", (
        f"{path.name}: {method[start + 1]['name']!r} comes between the traffic's start and the fault")


def test_a_wrong_argument_fails_validation() -> None:
    experiment = copy.deepcopy(_load(CHAOS / "zone-outage.yaml"))
    action = next(a for a in experiment["method"] if a["provider"]["func"] == "inject_fault")
    action["provider"]["arguments"]["zone"] = "zone-a"  # not an argument of inject_fault
    with pytest.raises((InvalidActivity, InvalidExperiment), match="zone"):
        ensure_experiment_is_valid(experiment)


def test_a_wrong_fault_parameter_fails_validation() -> None:
    experiment = copy.deepcopy(_load(CHAOS / "zone-outage.yaml"))
    action = next(a for a in experiment["method"] if a["provider"]["func"] == "inject_fault")
    action["provider"]["arguments"]["parameters"] = {"zones": "zone-a"}  # the kind takes `zone`
    with pytest.raises(errors.ConfigError, match="unknown parameters"):
        control.check_faults(experiment)
