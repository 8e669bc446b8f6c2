"""A recorded register history: every operation the traffic's clients ran, as they saw it.

One ``Operation`` is one request on one key (a ConfigMap) by one client: its kind (get,
put, compare-and-set on resourceVersion, delete), arguments, invoke and return times in
seconds on the run's Timeline clock, and its outcome. ``UNKNOWN`` marks a write that may
or may not have been applied (timeout, connection lost after sending, a 5xx); ``FAILED``
one that certainly was not (refused before it reached the server, rejected with a 4xx).
A ``History`` is those operations plus how they were produced; saved as JSON next to the
timeline. Pure: no cluster, no judging (that is ``slo.linearizability``).
"""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from zoneproof import errors

__all__ = ["FORMAT", "GUARD_WINDOW_S", "History", "OpKind", "Operation", "Outcome", "ReadMode", "TrafficPlan"]

FORMAT = "zoneproof.dev/register-history/v1"
#: Seconds before a fault over which the traffic must have run at its plan's minimum rate:
#: the operations that meet the fault (the traffic waits for it before a fault is injected).
GUARD_WINDOW_S = 4.0


class OpKind(enum.StrEnum):
    """What a client asked of one key."""

    GET = "get"
    PUT = "put"
    """Unconditional write (server-side apply: creates or updates)."""
    CAS = "cas"
    """Write only if the object is at ``expected_rv`` (update with a resourceVersion)."""
    DELETE = "delete"


class Outcome(enum.StrEnum):
    """What the client saw."""

    OK = "ok"
    NOT_FOUND = "not-found"
    CONFLICT = "conflict"
    """cas: the object was at another resourceVersion (409)."""
    FAILED = "failed"
    """Certainly not applied: never reached the server, or rejected (4xx other than 404/409)."""
    UNKNOWN = "unknown"
    """Possibly applied: timed out, the connection broke after sending, or a 5xx."""

    @property
    def definite(self) -> bool:
        """True when the outcome says what happened (not FAILED nor UNKNOWN)."""
        return self in (Outcome.OK, Outcome.NOT_FOUND, Outcome.CONFLICT)


class ReadMode(enum.StrEnum):
    """Where gets read from."""

    QUORUM = "quorum"
    """GET without resourceVersion: read from etcd with a quorum (linearizable)."""
    WATCH_CACHE = "watch-cache"
    """LIST with resourceVersion=0: the API server's watch cache (may be stale)."""
    INFORMER = "informer"
    """A client-side informer's cache (list+watch with client-go's reflector backoff): stale
    while its watch is broken."""


@dataclass(frozen=True, slots=True)
class Operation:
    """One request and what came back. ``value``: written (put, cas) or read (get, OK)."""

    id: int
    client: int
    key: str
    kind: OpKind
    call: float
    ret: float
    """When the client got an answer or gave up (for UNKNOWN: not when it took effect)."""
    outcome: Outcome
    value: str = ""
    expected_rv: str = ""
    rv: str = ""
    """The resourceVersion read (get) or written (put, cas) when OK."""
    error: str = ""

    def describe(self) -> str:
        """``#12 client 3 cas(@501, c3-7) -> conflict [4.012-4.020 s]``."""
        if self.kind is OpKind.PUT:
            call = f"put({self.value})"
        elif self.kind is OpKind.CAS:
            call = f"cas(@{self.expected_rv}, {self.value})"
        else:
            call = f"{self.kind}()"
        if self.outcome is Outcome.OK and self.kind is OpKind.GET:
            seen = f"{self.value}@{self.rv}"
        elif self.outcome is Outcome.OK and self.kind is not OpKind.DELETE:
            seen = f"ok@{self.rv}"
        else:
            seen = str(self.outcome) + (f" ({self.error})" if self.error else "")
        return (f"#{self.id} client {self.client} {self.key}: {call} -> {seen} "
                f"[{self.call:.3f}-{self.ret:.3f} s]")


@dataclass(frozen=True, slots=True)
class TrafficPlan:
    """How a history was produced: what the traffic was asked to do."""

    namespace: str
    keys: tuple[str, ...]
    clients: int
    rate_ops_s: float
    """Target total rate."""
    min_rate_ops_s: float
    """Below this (over the ``GUARD_WINDOW_S`` before a fault) the history is void: too little
    traffic to judge."""
    read_mode: ReadMode
    seed: int


@dataclass(frozen=True, slots=True)
class History:
    """Operations in invoke order, with the plan and the timeline's start (wall time)."""

    plan: TrafficPlan
    start_wall: str
    operations: tuple[Operation, ...] = field(default_factory=tuple)

    def rate(self, start: float, end: float) -> float | None:
        """Operations per second with a definite outcome that returned in [start, end];
        None for an empty window."""
        if end <= start:
            return None
        done = sum(1 for op in self.operations if op.outcome.definite and start <= op.ret <= end)
        return done / (end - start)

    def rate_before(self, at: float) -> float | None:
        """The rate (``rate``) over the ``GUARD_WINDOW_S`` before ``at``, or since the first
        call if that came later: what the traffic ran as a fault came; None without it."""
        started = self.started
        return None if started is None else self.rate(max(started, at - GUARD_WINDOW_S), at)

    @property
    def started(self) -> float | None:
        """The first invoke time (None without operations)."""
        return min((op.call for op in self.operations), default=None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"format": FORMAT, "plan": asdict(self.plan), "start_wall": self.start_wall,
                "operations": [asdict(op) for op in self.operations]}

    def save(self, path: Path) -> None:
        """Write as JSON (one operation per line, so a long history stays diffable)."""
        head = json.dumps({k: v for k, v in self.to_dict().items() if k != "operations"})
        body = ",\n".join(json.dumps(asdict(op)) for op in self.operations)
        path.write_text(f'{head[:-1]}, "operations": [\n{body}\n]}}\n')

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> History:
        """Parse ``to_dict``'s form; ConfigError names what is wrong."""
        if data.get("format") != FORMAT:
            raise errors.ConfigError(f"not a register history: format {data.get('format')!r}, "
                                     f"expected {FORMAT!r}")
        try:
            plan = data["plan"]
            plan = TrafficPlan(**{**plan, "keys": tuple(plan["keys"]),
                                  "read_mode": ReadMode(plan["read_mode"])})
            operations = tuple(
                Operation(**{**op, "kind": OpKind(op["kind"]), "outcome": Outcome(op["outcome"])})
                for op in data["operations"])
        except (KeyError, TypeError, ValueError) as exc:
            raise errors.ConfigError(f"malformed register history: {exc}") from exc
        return cls(plan, str(data.get("start_wall", "")), operations)

    @classmethod
    def load(cls, path: Path) -> History:
        """Read a saved history."""
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise errors.ConfigError(f"cannot read register history {path}: {exc}") from exc
        return cls.from_dict(data)

    def with_operations(self, operations: tuple[Operation, ...]) -> History:
        """The same plan with other operations (hand-made and trimmed histories)."""
        return replace(self, operations=operations)
