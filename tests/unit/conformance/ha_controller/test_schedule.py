"""Schedules: generated from a seed (the same seed, the same batch), kept as JSON, cut
for shrinking (what a dropped pod or node introduced goes with it), shrunk on a runner."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from zoneproof.conformance.ha_controller import generate, suite
from zoneproof.conformance.ha_controller.executor import Outcome
from zoneproof.conformance.ha_controller.history import History, Step
from zoneproof.conformance.ha_controller.model import RULES, Verdict, Violation
from zoneproof.conformance.ha_controller.schedule import Event, NodeSpec, PodSpec, Schedule
from zoneproof.measure.audit import ApiOrder

SCHEDULE = Schedule(
    nodes=(NodeSpec("a"), NodeSpec("b", reported=False)),
    pods=(PodSpec("p0", 0), PodSpec("p1", 1, namespace="u", labels=2, phase="Pending")),
    events=(Event("start", target="0"), Event("ready", node=1, status="False"),
            Event("pod", pod=PodSpec("p2", 1)), Event("phase", name="p2", phase="Failed"),
            Event("wait", seconds=7.0), Event("signal", target="leader", signal="SIGSTOP"),
            Event("recreate", name="p0", node=1)),
    dead_leader=True)


def test_the_same_seed_draws_the_same_batch_and_another_seed_another() -> None:
    first = generate.draw_batch(6, 42)
    assert first == generate.draw_batch(6, 42) != generate.draw_batch(6, 43)
    assert all(s.notes["seed"] == 42 for s in first)
    assert all({"0", "1"} <= {e.target for e in s.events if e.kind == "start"} for s in first)
    assert all(s.seconds <= 24.0 for s in generate.draw_batch(30, 7))


def test_a_schedule_round_trips_through_its_case_file(tmp_path: Path) -> None:
    assert Schedule.load(SCHEDULE.save(tmp_path / "case.json")) == SCHEDULE
    assert "pod p1 in u on node 1, missing the selector (way 2), Pending" in SCHEDULE.describe()


def test_dropping_a_node_takes_its_pods_and_events_and_renumbers() -> None:
    cut = SCHEDULE.without(nodes=[0])
    assert [p.name for p in cut.pods] == ["p1"] and cut.pods[0].node == 0
    assert [e.kind for e in cut.events] == ["start", "ready", "pod", "phase", "wait", "signal"]
    assert cut.events[1].node == 0 and cut.events[2].pod is not None
    assert SCHEDULE.without(nodes=[1]).events == (
        SCHEDULE.events[0], SCHEDULE.events[4], SCHEDULE.events[5])


def test_dropping_a_pod_takes_its_events() -> None:
    cut = SCHEDULE.without(events=[2])
    assert [e.kind for e in cut.events] == ["start", "ready", "wait", "signal", "recreate"]
    assert SCHEDULE.without(pods=["p0"]).events[-1].kind == "signal"


def test_candidates_cut_big_first_then_shorten_waits_and_simplify() -> None:
    found = list(suite.candidates(SCHEDULE))
    assert len(found[0].events) < len(SCHEDULE.events) // 2 + 2
    assert any(c.seconds < SCHEDULE.seconds and c.size == SCHEDULE.size for c in found)
    assert found[-2].dead_leader is False and found[-1].watched == 1


def _outcome(schedule: Schedule, fails: bool) -> Outcome:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    step = Step(ApiOrder(at, at, 1), "r0", "delete")
    violations = (Violation(RULES["node"], 0, "x"),) if fails else ()
    return Outcome(schedule, History((step,)), Verdict(violations, (), 0), 0.0)


def test_shrinking_keeps_what_still_breaks_the_rule_down_to_a_fixed_point() -> None:
    """A runner that fails whenever the schedule still freezes the leader with p0 there."""
    def runner(schedule: Schedule, slot: int) -> Outcome:
        fails = any(e.signal == "SIGSTOP" for e in schedule.events) and any(
            p.name == "p0" for p in schedule.pods)
        return _outcome(schedule, fails)

    shrunk = suite.shrink(_outcome(SCHEDULE, True), runner, slots=2, seconds=60)
    assert shrunk.complete and shrunk.runs > 0
    schedule = shrunk.outcome.schedule
    assert [e.kind for e in schedule.events] == ["signal"] and [p.name for p in schedule.pods] \
        == ["p0"] and len(schedule.nodes) == 1 and not schedule.dead_leader


def test_a_batch_stops_at_its_first_failure_and_keeps_what_ran() -> None:
    batch = generate.draw_batch(8, 3)
    outcomes = suite.run_batch(batch, lambda s, slot: _outcome(s, s.notes["index"] == 2),
                               slots=1, seconds=60)
    assert [o.schedule.notes["index"] for o in outcomes] == [0, 1, 2]


def test_the_late_family_changes_a_not_ready_status() -> None:
    """C1/C3: False <-> Unknown is no Ready -> NotReady transition; the late family makes that
    change after a pod was bound past the bound (a controller that reads any change to a
    not-True status as a transition deletes that pod), every batch."""
    for run_seed in range(6):
        (late,) = [s for s in generate.draw_batch(len(generate.FAMILIES) + 1, run_seed)
                   if s.notes.get("family") == "late"]
        statuses = [e.status for e in late.events if e.kind == "ready"]
        assert statuses[:2] in (["False", "Unknown"], ["Unknown", "False"]), run_seed


def test_a_node_made_again_is_an_event_of_that_node() -> None:
    schedule = Schedule((NodeSpec("a"), NodeSpec("b")), (PodSpec("p0", 1),),
                        (Event("renode", node=1, status=""), Event("renode", node=0,
                                                                   status="False")))
    assert "node 1 deleted and re-created, never reported" in schedule.describe()
    assert "node 0 deleted and re-created, Ready=False" in schedule.describe()
    cut = schedule.without(nodes=[0])
    assert [(e.kind, e.node) for e in cut.events] == [("renode", 0)]


def test_the_scope_and_renode_families_leave_nothing_to_chance() -> None:
    """Every batch: the scope family's other node is cordoned and tainted (a controller that
    reads either as NotReady deletes its pod); the renode family makes its node again not
    Ready with a chosen pod bound to it (one that compares it with the node it replaced
    deletes the pod)."""
    for run_seed in range(6):
        batch = generate.draw_batch(len(generate.FAMILIES) + 1, run_seed)
        scope, renode = (next(s for s in batch if s.notes.get("family") == name)
                         for name in ("scope", "renode"))
        assert {("cordon", 1), ("taint", 1)} <= {(e.kind, e.node) for e in scope.events}
        remade = [e for e in renode.events if e.kind == "renode"]
        assert [(e.node, e.status != "True") for e in remade] == [(0, True)], run_seed
        assert renode.pods[0].node == 0 and renode.pods[0].labels < 0


def test_the_scope_family_fails_a_node_holding_a_chosen_pod_in_every_state() -> None:
    """C1 (whatever its phase): every batch, the node the scope family fails holds a chosen
    pod of each phase and an already terminating one (a controller that skips terminating
    or pending pods was caught only when a free draw held one: a blind mutant that skipped
    terminating pods passed a whole batch)."""
    for run_seed in range(6):
        batch = generate.draw_batch(len(generate.FAMILIES) + 1, run_seed)
        scope = next(s for s in batch if s.notes.get("family") == "scope")
        failed = {e.node for e in scope.events if e.kind == "ready" and e.status != "True"}
        assert failed == {0}, run_seed
        states = {(p.phase, p.terminating) for p in scope.pods
                  if p.node == 0 and p.labels < 0 and p.namespace != "u"}
        assert states == set(generate.CHOSEN_STATES), run_seed


def test_the_scope_family_fails_a_node_holding_a_chosen_pod_matching_every_way() -> None:
    """C1/C2 (the selector as the API server reads it): every batch, the failed node holds
    chosen pods with labels matching each way (``generate.MATCHING_WAYS``)."""
    for run_seed in range(6):
        batch = generate.draw_batch(len(generate.FAMILIES) + 1, run_seed)
        scope = next(s for s in batch if s.notes.get("family") == "scope")
        ways = {p.labels for p in scope.pods if p.node == 0 and p.labels < 0 and p.namespace != "u"}
        assert ways == set(generate.MATCHING_WAYS), run_seed


def test_the_late_family_changes_a_not_ready_status_both_ways() -> None:
    """C3: False -> Unknown and Unknown -> False after a pod was bound past the bound, every
    batch (with one way only, a controller acting on the other passed half the batches)."""
    for run_seed in range(6):
        batch = generate.draw_batch(len(generate.FAMILIES) + 1, run_seed)
        late = next(s for s in batch if s.notes.get("family") == "late")
        statuses = [e.status for e in late.events if e.kind == "ready"]
        pairs = set(zip(statuses, statuses[1:], strict=False))
        assert {("False", "Unknown"), ("Unknown", "False")} <= pairs, run_seed
