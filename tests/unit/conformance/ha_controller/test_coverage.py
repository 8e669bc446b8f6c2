"""Coverage of the generated controller suite: which rules a schedule can expose, counted
over drawn batches without a bed; every batch opens with a schedule per family, so every
rule is exposed every run."""

from __future__ import annotations

import pytest

from zoneproof.conformance.ha_controller import coverage, generate
from zoneproof.conformance.ha_controller.model import RULES, Setup
from zoneproof.conformance.ha_controller.schedule import Event, NodeSpec, PodSpec, Schedule

SETUP = Setup(("w1", "w2"), "app=noobaa", ("r0", "r1"))
START = (Event("start", target="1"), Event("start", target="0"), Event("leader"),
         Event("wait", seconds=2.0))


@pytest.mark.parametrize("run_seed", [0, 1, 2])
def test_every_batch_opens_with_a_schedule_exposing_each_rule(run_seed: int) -> None:
    batch = generate.draw_batch(len(generate.FAMILIES) + 1, run_seed)
    head = batch[:len(generate.FAMILIES)]
    assert [s.notes["family"] for s in head] == list(generate.FAMILIES)
    counts = coverage.report(head, SETUP)
    assert set(counts) == set(RULES)
    assert all(counts.values()), {r: n for r, n in counts.items() if not n}
    assert all(s.seconds <= 24.0 for s in head), "within the default budget's waits"


def test_the_families_ask_for_a_second_outage_and_a_standby_asked_to_stop() -> None:
    """A node's second Ready -> NotReady with a pod bound after its recovery (C1: every
    transition counts); a standby SIGTERMed beside a live leader (C6: only the holder
    releases)."""
    again, standby = (generate.draw_batch(len(generate.FAMILIES) + 1, 0)[
        list(generate.FAMILIES).index(name)] for name in ("again", "standby"))
    kinds = [(e.kind, e.node, e.status) for e in again.events if e.kind in ("ready", "pod")]
    downs = [i for i, (kind, node, status) in enumerate(kinds)
             if kind == "ready" and node == 0 and status != "True"]
    assert len(downs) == 2 and ("ready", 0, "True") in kinds[downs[0]:downs[1]]
    assert any(kind == "pod" for kind, _, _ in kinds[downs[0]:downs[1]])
    assert any(e.kind == "signal" and e.target == "standby" and e.signal == "SIGTERM"
               for e in standby.events)


def test_another_seed_draws_other_details_of_the_families() -> None:
    first = generate.draw_batch(len(generate.FAMILIES) + 1, 0)
    assert first != generate.draw_batch(len(generate.FAMILIES) + 1, 5)


def test_a_transition_under_a_leader_exposes_the_choice_of_pods() -> None:
    schedule = Schedule(
        (NodeSpec("a"), NodeSpec("a")),
        (PodSpec("p0", 0), PodSpec("p1", 0, labels=0), PodSpec("p2", 0, namespace="u"),
         PodSpec("p3", 1)),
        (*START, Event("ready", node=0, status="Unknown"), Event("wait", seconds=3.0)))
    assert {"transition", "force", "selector", "namespace", "node", "leader"} <= \
        coverage.exposed(schedule, SETUP)
    alone = Schedule((NodeSpec("a"),), (PodSpec("p0", 0),),
                     (Event("ready", node=0, status="False"), Event("wait", seconds=3.0)))
    assert coverage.exposed(alone, SETUP) == frozenset(), "no replica runs: nothing to judge"


def test_a_pod_on_a_failed_node_past_the_bound_exposes_a_sweep_and_a_late_start_catch_up(
) -> None:
    late = Schedule((NodeSpec("a"),), (PodSpec("p0", 0),), (
        *START, Event("ready", node=0, status="False"), Event("wait", seconds=11.0),
        Event("pod", pod=PodSpec("p1", 0)), Event("wait", seconds=2.0)))
    assert "trigger" in coverage.exposed(late, SETUP)
    soon = Schedule(late.nodes, late.pods, late.events[:5])
    assert "trigger" not in coverage.exposed(soon, SETUP)
    missed = Schedule((NodeSpec("a"),), (PodSpec("p0", 0),), (
        Event("ready", node=0, status="False"), Event("start", target="0")))
    assert "new-leader" in coverage.exposed(missed, SETUP)


def test_signals_and_standbys_expose_the_lease_rules() -> None:
    def rules(*events: Event, dead: bool = False) -> frozenset[str]:
        return coverage.exposed(Schedule((NodeSpec("a"),), (), (*START, *events),
                                         dead_leader=dead), SETUP)

    assert {"release", "takeover"} <= rules(Event("signal", target="leader", signal="SIGTERM"))
    assert {"exit-on-loss", "takeover"} <= rules(
        Event("signal", target="leader", signal="SIGSTOP"), Event("wait", seconds=13.0))
    assert "standby" in rules(Event("wait", seconds=17.0))
    assert "standby" not in rules(Event("wait", seconds=5.0))
    assert "takeover" in rules(dead=True)


def test_the_report_has_a_line_per_rule_with_what_was_decided() -> None:
    text = coverage.format_report(dict.fromkeys(RULES, 1), 3, {"trigger": 2})
    assert len(text.splitlines()) == len(RULES)
    assert "trigger       C3        exposed by   1/3, decided in   2 run(s)" in text


def test_a_node_made_again_not_ready_exposes_a_trigger_and_no_transition() -> None:
    schedule = Schedule((NodeSpec("a"),), (PodSpec("p0", 0),),
                        (*START, Event("renode", node=0, status="Unknown"),
                         Event("wait", seconds=3.0)))
    assert coverage.exposed(schedule, SETUP) >= {"trigger"}
    assert "transition" not in coverage.exposed(schedule, SETUP)
