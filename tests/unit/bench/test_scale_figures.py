"""The controller-scale bench's figures: reaction per node, zone completion, spread."""

from __future__ import annotations

import datetime as dt

import pytest

from zoneproof.bench.parallel import BarePod
from zoneproof.bench.scale import _pods, earliest_completion, scale_figures

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_reaction_is_the_first_delete_of_each_node_after_its_not_ready() -> None:
    not_ready = {"n1": at(0), "n2": at(2)}
    deletes = [("n2", at(2.5)), ("n1", at(0.3)), ("n1", at(1.0)), ("n2", at(4.0)),
               ("elsewhere", at(0.1))]
    got = scale_figures(not_ready, deletes)
    assert got["reaction_p50_seconds"] == pytest.approx(0.3)
    assert got["reaction_p99_seconds"] == pytest.approx(0.5)
    assert got["reaction_max_seconds"] == pytest.approx(0.5)
    assert got["node_done_p99_seconds"] == pytest.approx(2.0)
    assert got["not_ready_spread_seconds"] == pytest.approx(2.0)
    assert got["zone_completion_seconds"] == pytest.approx(4.0)  # first NotReady → last delete
    assert got["nodes_acted_on"] == 2


def test_no_delete_on_a_not_ready_node_is_an_error() -> None:
    with pytest.raises(ValueError, match="no force delete"):
        scale_figures({"n1": at(0)}, [("n2", at(1))])


def test_pods_spread_over_nodes_half_matching_on_each() -> None:
    pods = _pods(["a", "b", "c"], 12)
    assert [p.node for p in pods] == ["a", "b", "c"] * 4
    for node in "abc":
        mine = [dict(p.labels)["app"] for p in pods if p.node == node]
        assert sorted(mine) == ["noobaa", "noobaa", "other", "other"]
    assert pods[0] == BarePod("scale", "p-0", "a", (("app", "noobaa"),))
    assert pods[0].body()["spec"]["nodeName"] == "a"


@pytest.mark.parametrize(("arrivals", "expected"), [
    ({"n1": (0, 10)}, 1.0),
    ({"n1": (0, 10), "n2": (5, 10)}, 6.0),  # the server idles between the two
    ({"n1": (0, 10), "n2": (0.5, 10)}, 2.0),  # the second waits behind the first
    ({"n1": (3, 10), "n2": (0, 10)}, 4.0),  # order of the mapping does not matter
])
def test_earliest_completion_is_a_fluid_queue_at_the_raw_rate(
        arrivals: dict[str, tuple[float, int]], expected: float) -> None:
    not_ready = {n: at(t) for n, (t, _) in arrivals.items()}
    pods = {n: count for n, (_, count) in arrivals.items()}
    assert earliest_completion(not_ready, {**pods, "elsewhere": 99}, 10.0) == pytest.approx(
        expected)
