"""The agent's decisions (pure): act, revert, refuse or wait; the dead-man's switch by its own clock.

Every tick the agent reads its node's command and the switch Lease and asks ``decide``:

- no fault active, a command it has not handled yet: act if the switch is alive, else refuse
  (a suite that is not renewing must not start faults);
- a fault active: revert when the command is gone or replaced (``COMMANDED``), when the
  fault has been active for its ``max_duration_s`` (``DEADLINE``), or when the switch is not
  alive (``SWITCH_EXPIRED``): the suite crashed, was SIGKILLed or lost its network;
- a command it handled already (acted and reverted, or refused) is never acted on again.

The switch is alive while the Lease's renewTime keeps changing: the agent notes, on its own
monotonic clock, when it first saw each renewTime, and calls the switch dead once none is new
for the Lease's duration. Clocks of suite and node are never compared, so skew cannot
expire (or prolong) a fault. An agent that (re)starts grants one duration from its first look.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from zoneproof.nodeagent.protocol import Command, Reason

__all__ = ["Active", "AgentState", "Choice", "Decision", "Switch", "after", "decide", "observe"]


@dataclass(frozen=True, slots=True)
class Switch:
    """The agent's view of the switch Lease."""

    #: The last renewTime seen (None: the Lease is absent or was never renewed).
    renew_time: str | None = None
    #: The agent's monotonic time when it first saw ``renew_time``.
    seen_at: float = 0.0
    duration_s: float = 0.0

    def alive(self, now: float) -> bool:
        """True while the last renewal is at most one Lease duration old (agent's clock)."""
        return self.renew_time is not None and now - self.seen_at <= self.duration_s


def observe(switch: Switch, renew_time: str | None, duration_s: float | None, now: float) -> Switch:
    """The switch after reading the Lease (``renew_time`` None: no Lease, or never renewed)."""
    if renew_time is None or duration_s is None:
        return Switch()
    if renew_time == switch.renew_time:
        return Switch(renew_time, switch.seen_at, duration_s)
    return Switch(renew_time, now, duration_s)


@dataclass(frozen=True, slots=True)
class Active:
    """The fault in effect on this node: its command and when the agent acted (monotonic)."""

    command: Command
    since: float


@dataclass(frozen=True, slots=True)
class AgentState:
    """What the agent holds between ticks."""

    active: Active | None = None
    #: The id of the last command acted on or refused: never acted on again.
    handled: str | None = None


class Choice(enum.Enum):
    NOTHING = "nothing"
    ACT = "act"
    REVERT = "revert"
    REFUSE = "refuse"


@dataclass(frozen=True, slots=True)
class Decision:
    choice: Choice
    reason: Reason | None = None


def decide(state: AgentState, desired: Command | None, switch_alive: bool, now: float) -> Decision:
    """What to do this tick (see the module docstring)."""
    active = state.active
    if active is None:
        if desired is None or desired.id == state.handled:
            return Decision(Choice.NOTHING)
        return Decision(Choice.ACT if switch_alive else Choice.REFUSE)
    if desired is None or desired.id != active.command.id:
        return Decision(Choice.REVERT, Reason.COMMANDED)
    if now - active.since >= active.command.max_duration_s:
        return Decision(Choice.REVERT, Reason.DEADLINE)
    if not switch_alive:
        return Decision(Choice.REVERT, Reason.SWITCH_EXPIRED)
    return Decision(Choice.NOTHING)


def after(state: AgentState, decision: Decision, desired: Command | None, now: float, *,
          succeeded: bool = True) -> AgentState:
    """The state once ``decision`` was carried out (``succeeded``: the host command worked).

    A failed act leaves nothing active (the command is handled: reported failed, not
    retried); a failed revert keeps the fault active, so the next tick tries again.
    """
    if decision.choice is Choice.ACT and desired is not None:
        return AgentState(Active(desired, now) if succeeded else None, desired.id)
    if decision.choice is Choice.REFUSE and desired is not None:
        return AgentState(None, desired.id)
    if decision.choice is Choice.REVERT:
        return AgentState(None, state.handled) if succeeded else state
    return state
