"""The agent's decisions: act, refuse, revert on command, at the deadline, when the switch dies."""

from __future__ import annotations

import pytest

from zoneproof.nodeagent import logic
from zoneproof.nodeagent.logic import AgentState, Choice, Decision, Switch
from zoneproof.nodeagent.protocol import Action, Command, Reason

CMD = Command("c1", Action.STOP_KUBELET, max_duration_s=60.0)


def _active(since: float = 100.0, command: Command = CMD) -> AgentState:
    return AgentState(logic.Active(command, since), command.id)


def test_a_new_command_is_acted_on_only_while_the_switch_is_alive() -> None:
    assert logic.decide(AgentState(), CMD, True, 0.0) == Decision(Choice.ACT)
    assert logic.decide(AgentState(), CMD, False, 0.0) == Decision(Choice.REFUSE)
    assert logic.decide(AgentState(), None, True, 0.0) == Decision(Choice.NOTHING)


def test_a_handled_command_is_never_acted_on_again() -> None:
    reverted = logic.after(_active(), Decision(Choice.REVERT, Reason.DEADLINE), CMD, 200.0)
    assert reverted == AgentState(None, "c1")
    assert logic.decide(reverted, CMD, True, 201.0) == Decision(Choice.NOTHING)
    refused = logic.after(AgentState(), Decision(Choice.REFUSE), CMD, 0.0)
    assert logic.decide(refused, CMD, True, 1.0) == Decision(Choice.NOTHING)
    newer = Command("c2", Action.STOP_KUBELET, 60.0)
    assert logic.decide(reverted, newer, True, 202.0) == Decision(Choice.ACT)


@pytest.mark.parametrize(("desired", "alive", "now", "expected"), [
    (CMD, True, 120.0, Decision(Choice.NOTHING)),
    (None, True, 120.0, Decision(Choice.REVERT, Reason.COMMANDED)),
    (Command("other", Action.STOP_KUBELET, 60.0), True, 120.0, Decision(Choice.REVERT, Reason.COMMANDED)),
    (CMD, True, 160.0, Decision(Choice.REVERT, Reason.DEADLINE)),
    (CMD, False, 120.0, Decision(Choice.REVERT, Reason.SWITCH_EXPIRED)),
    (CMD, False, 170.0, Decision(Choice.REVERT, Reason.DEADLINE)),
])
def test_an_active_fault_is_reverted_on_command_deadline_or_dead_switch(
        desired: Command | None, alive: bool, now: float, expected: Decision) -> None:
    assert logic.decide(_active(since=100.0), desired, alive, now) == expected


def test_a_failed_act_leaves_nothing_active_and_a_failed_revert_keeps_the_fault() -> None:
    failed = logic.after(AgentState(), Decision(Choice.ACT), CMD, 5.0, succeeded=False)
    assert failed == AgentState(None, "c1")
    state = _active()
    kept = logic.after(state, Decision(Choice.REVERT, Reason.COMMANDED), None, 9.0, succeeded=False)
    assert kept == state
    assert logic.after(AgentState(), Decision(Choice.ACT), CMD, 5.0) == _active(since=5.0)


def test_the_switch_lives_while_its_renew_time_changes_by_the_agents_clock() -> None:
    s = logic.observe(Switch(), "t1", 15.0, now=100.0)
    assert s.alive(100.0) and s.alive(115.0) and not s.alive(115.1)
    s = logic.observe(s, "t1", 15.0, now=110.0)  # same renewTime: not a renewal
    assert s.seen_at == 100.0 and not s.alive(116.0)
    s = logic.observe(s, "t2", 15.0, now=112.0)  # renewed
    assert s.alive(126.0) and not s.alive(127.5)


def test_an_absent_lease_is_a_dead_switch() -> None:
    s = logic.observe(Switch("t1", 100.0, 15.0), None, None, now=101.0)
    assert not s.alive(101.0)
    assert not Switch().alive(0.0)
