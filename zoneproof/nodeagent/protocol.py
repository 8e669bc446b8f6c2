"""What the suite and the node agents exchange, through the API server only (pure).

Per node, one ConfigMap ``<NAMESPACE>/node-<node>``: the suite writes the desired fault under
``COMMAND_KEY`` (a ``Command``: id, action, its bound ``max_duration_s``, the switch Lease),
or removes it to ask for the revert; the agent writes what it did under ``REPORT_KEY`` (a
``Report``: state, when it acted and reverted, why it reverted). The dead-man's switch is one
Lease, ``<NAMESPACE>/<SWITCH_LEASE>``, that the suite renews while faults are active.
"""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "COMMAND_KEY",
    "NAMESPACE",
    "REPORT_KEY",
    "SWITCH_LEASE",
    "Action",
    "Command",
    "Reason",
    "Report",
    "State",
    "configmap_name",
]

#: The agent's namespace: its DaemonSet, the per-node ConfigMaps and the switch Lease.
NAMESPACE = "zoneproof-node-agent"
#: The dead-man's switch: renewed by the suite while any fault is active.
SWITCH_LEASE = "zoneproof-switch"
COMMAND_KEY = "command"
REPORT_KEY = "report"


def configmap_name(node: str) -> str:
    """The ConfigMap that carries ``node``'s command and report."""
    return f"node-{node}"


class Action(enum.StrEnum):
    """What an agent can do to its node (and undo)."""

    STOP_KUBELET = "stop-kubelet"
    #: The host's own processes (the kubelet among them) and the command's ``endpoints``
    #: (the API servers) exchange nothing; pods and everything else keep running.
    CUT_APISERVER = "cut-apiserver"


class State(enum.StrEnum):
    """Where an agent's current or last command stands."""

    ACTIVE = "active"  # the fault is in effect
    REVERTED = "reverted"  # undone (on command, at the switch's expiry, at the deadline)
    REFUSED = "refused"  # not acted on: the switch was not being renewed
    FAILED = "failed"  # the host command failed


class Reason(enum.StrEnum):
    """Why an agent reverted."""

    COMMANDED = "commanded"  # the suite removed the command
    SWITCH_EXPIRED = "switch-expired"  # the suite stopped renewing the switch Lease
    DEADLINE = "deadline"  # the fault outlived its max_duration_s
    AGENT_STOPPED = "agent-stopped"  # the agent was told to exit (uninstalled)


@dataclass(frozen=True, slots=True)
class Command:
    """A desired fault on one node."""

    id: str
    action: Action
    #: The agent reverts by itself after this long (its own clock, from when it acted).
    max_duration_s: float
    #: The switch Lease's name (in NAMESPACE).
    switch: str = SWITCH_LEASE
    #: CUT_APISERVER's (address, port)s: where the API servers listen, as the host reaches them.
    endpoints: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Command:
        """Parse; ValueError on anything but a well-formed command."""
        data = _object(text)
        try:
            command = cls(str(data["id"]), Action(data["action"]), float(data["max_duration_s"]),
                          str(data.get("switch", SWITCH_LEASE)),
                          tuple((str(a), int(p)) for a, p in data.get("endpoints") or ()))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed command {text!r}: {exc}") from exc
        if not command.id or command.max_duration_s <= 0:
            raise ValueError(f"malformed command {text!r}: empty id or non-positive max_duration_s")
        if command.action is Action.CUT_APISERVER and not command.endpoints:
            raise ValueError(f"malformed command {text!r}: {command.action} names no endpoint")
        return command


@dataclass(frozen=True, slots=True)
class Report:
    """What an agent did about command ``command_id`` (wall-clock times, the node's clock)."""

    command_id: str
    action: str
    state: State
    acted_at: float | None = None
    reverted_at: float | None = None
    reason: Reason | None = None
    error: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Report:
        """Parse; ValueError on anything but a well-formed report."""
        data = _object(text)
        try:
            return cls(str(data["command_id"]), str(data["action"]), State(data["state"]),
                       _float(data.get("acted_at")), _float(data.get("reverted_at")),
                       Reason(data["reason"]) if data.get("reason") else None,
                       str(data.get("error", "")))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed report {text!r}: {exc}") from exc


def _object(text: str) -> dict[str, Any]:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {text!r}")
    return data


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
