"""The traffic-overhead bench's pure parts: the experiment without traffic, the ratios."""

from pathlib import Path

import pytest
import yaml

from zoneproof.bench.traffic import (
    EXPERIMENTS,
    TRAFFIC_ACTIONS,
    _ratios,
    without_history_traffic,
)

CHAOS = Path(__file__).parents[3] / "chaos"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_only_the_traffic_and_its_slo_are_removed(name: str) -> None:
    shipped = yaml.safe_load((CHAOS / f"{name}.yaml").read_text())
    plain = without_history_traffic(shipped)
    kept = [a["name"] for a in shipped["method"] if a["name"] not in TRAFFIC_ACTIONS]
    assert [a["name"] for a in plain["method"]] == kept
    assert plain["configuration"]["zoneproof_slos"] == [
        s for s in shipped["configuration"]["zoneproof_slos"] if s != "history-linearizable"]
    assert "history-linearizable" in shipped["configuration"]["zoneproof_slos"]  # not mutated


def test_an_experiment_without_traffic_is_refused() -> None:
    with pytest.raises(ValueError, match="runs no history traffic"):
        without_history_traffic({"title": "t", "method": [{"name": "inject"}]})


def test_ratio_of_medians_with_over_without() -> None:
    samples = {"e f with": [2.0, 4.0, 3.0], "e f without": [2.0, 1.0, 3.0],
               "e g with": [1.0], "e g without": [0.0]}
    assert _ratios(samples) == {"e f with/without": [1.5]}
    even = {"e f with": [1.0, 2.0], "e f without": [1.0, 1.0]}  # medians 1.5 and 1
    assert _ratios(even) == {"e f with/without": [1.5]}
