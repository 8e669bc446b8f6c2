"""Is a recorded register history linearizable? porcupine decides, per key; this judges.

``prepare`` turns a History into the checker's input: reads that failed observed nothing
and go; writes that certainly failed had no effect and go; a write whose outcome is unknown
stays with no return time (porcupine's "infinity": it may take effect any time after its
call, or never) unless a read saw its unique value, which proves it applied with that
resourceVersion by that read's return (etcd's robustness tests patch the same way). A client
continues under a new porcupine client id after such a write, as in etcd's tests.

``check`` runs ``porcupine-check`` (zoneproof's command over the pinned porcupine, see
``zoneproof.binaries``) with a per-key timeout: a key it cannot decide in time is UNKNOWN,
never a pass. ``judge`` makes the ``history-linearizable`` SLO result: VOID when
the traffic before the fault ran under its minimum rate, NO_DATA when the checker timed
out, FAIL naming the operations it could not place.
"""

from __future__ import annotations

import enum
import json
import logging
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoneproof import errors
from zoneproof._util import processes
from zoneproof.binaries import resolve
from zoneproof.faults.base import FaultRecord
from zoneproof.measure.history import GUARD_WINDOW_S, History, Operation, OpKind, Outcome
from zoneproof.slo.results import SloResult, SloStatus, evaluate
from zoneproof.slo.spec import Slo

__all__ = [
    "CHECKER",
    "DEFAULT_TIMEOUT_S",
    "INPUT",
    "VERDICT",
    "VISUALIZATIONS",
    "CheckReport",
    "HistoryFigures",
    "KeyCheck",
    "KeyResult",
    "check",
    "explain",
    "figures",
    "judge",
    "prepare",
]

log = logging.getLogger(__name__)

CHECKER = "porcupine-check"
INPUT, VERDICT, VISUALIZATIONS = "porcupine-input.json", "porcupine.json", "porcupine"
"""What ``check`` writes into its workdir: the checker's input, its verdict, and a directory
of one HTML visualization per illegal key."""
DEFAULT_TIMEOUT_S = 60.0
_NS = 1_000_000_000
_MAX_NAMED = 6
"""Operations named per illegal key in a message (the visualization has them all)."""


class KeyResult(enum.StrEnum):
    """porcupine's verdict on one key."""

    OK = "ok"
    ILLEGAL = "illegal"
    UNKNOWN = "unknown"
    """The checker ran out of time: undecided, never a pass."""


@dataclass(frozen=True, slots=True)
class KeyCheck:
    """One key: verdict, size, time, and for an illegal key where linearization stopped."""

    key: str
    result: KeyResult
    operations: int
    seconds: float
    last_linearized: int | None = None
    """Id of the last operation of the longest linearizable prefix."""
    frontier: tuple[int, ...] = ()
    """Ids of the operations that had to come next and none of which fit the model."""
    state: str = ""
    """The model state after the longest linearizable prefix."""
    visualization: Path | None = None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What the checker found, with its timings (seconds: wall time of the whole command)."""

    keys: tuple[KeyCheck, ...]
    operations: int
    seconds: float
    timeout_s: float
    porcupine: str

    @property
    def non_linearizable_keys(self) -> float | None:
        """Illegal keys; None when none is illegal but one is undecided, or nothing was checked."""
        illegal = sum(1 for k in self.keys if k.result is KeyResult.ILLEGAL)
        if illegal:
            return float(illegal)
        if not self.keys or any(k.result is KeyResult.UNKNOWN for k in self.keys):
            return None
        return 0.0

    def of(self, result: KeyResult) -> list[KeyCheck]:
        """The keys with ``result``."""
        return [k for k in self.keys if k.result is result]


def _rv(value: str, op: Operation) -> int:
    try:
        return int(value)
    except ValueError:
        raise errors.ConfigError(
            f"operation #{op.id} carries resourceVersion {value!r}, not an integer: the checker "
            "compares resourceVersions as etcd revisions (etcd3 storage)") from None


def _observed(history: History) -> dict[tuple[str, str], tuple[str, float]]:
    """(key, value) → (rv, earliest return) of every value a definite read saw."""
    seen: dict[tuple[str, str], tuple[str, float]] = {}
    for op in history.operations:
        if op.kind is OpKind.GET and op.outcome is Outcome.OK:
            earlier = seen.get((op.key, op.value))
            if earlier is None or op.ret < earlier[1]:
                seen[(op.key, op.value)] = (op.rv, op.ret)
    return seen


def _relevant(op: Operation) -> bool:
    if op.kind is OpKind.GET:
        return op.outcome.definite
    return op.outcome is not Outcome.FAILED


def prepare(history: History) -> list[dict[str, Any]]:
    """The checker's operations (see the module docstring), times in nanoseconds."""
    seen = _observed(history)
    client_ids: dict[int, int] = {}
    next_id = 0
    prepared = []
    for op in sorted(history.operations, key=lambda o: o.call):
        if not _relevant(op):
            continue
        if op.client not in client_ids:
            client_ids[op.client], next_id = next_id, next_id + 1
        outcome, rv, ret = op.outcome, op.rv, op.ret
        if outcome is Outcome.UNKNOWN and op.kind in (OpKind.PUT, OpKind.CAS):
            proof = seen.get((op.key, op.value))
            if proof is not None and proof[1] >= op.call:
                outcome, rv, ret = Outcome.OK, proof[0], proof[1]
        prepared.append({
            "id": op.id, "client": client_ids[op.client], "key": op.key, "kind": str(op.kind),
            "value": op.value, "outcome": str(outcome),
            "expected": _rv(op.expected_rv, op) if op.kind is OpKind.CAS else 0,
            "rv": _rv(rv, op) if outcome is Outcome.OK and op.kind is not OpKind.DELETE else 0,
            "call": round(op.call * _NS),
            "return": None if outcome is Outcome.UNKNOWN else round(ret * _NS)})
        if op.outcome is Outcome.UNKNOWN:  # its return time is not the client's: a new id
            client_ids[op.client], next_id = next_id, next_id + 1
    return prepared


def _annotations(faults: Sequence[FaultRecord], end: float) -> list[dict[str, Any]]:
    return [{"tag": "faults", "start": round(f.injected_at * _NS),
             "end": round((f.reverted_at if f.reverted_at is not None else end) * _NS),
             "description": f"{f.kind}: {', '.join(f.targets)}"} for f in faults]


def _parse(raw: dict[str, Any], operations: int, seconds: float) -> CheckReport:
    keys = tuple(KeyCheck(
        key=k["key"], result=KeyResult(k["result"]), operations=int(k["operations"]),
        seconds=float(k["seconds"]), last_linearized=k.get("last_linearized"),
        frontier=tuple(k.get("frontier") or ()), state=k.get("state", ""),
        visualization=Path(k["visualization"]) if k.get("visualization") else None)
        for k in raw["keys"])
    return CheckReport(keys, operations, seconds, float(raw["timeout_s"]), str(raw["porcupine"]))


def check(history: History, workdir: Path, *, faults: Sequence[FaultRecord] = (),
          timeout_s: float = DEFAULT_TIMEOUT_S, checker: Path | None = None) -> CheckReport:
    """Check ``history`` with porcupine: ``workdir`` gets the checker's input
    (``porcupine-input.json``), its verdict (``porcupine.json``) and the visualization of each
    illegal key (``porcupine/<key>.html``, ``faults`` drawn as annotations). A check that
    does not end within its budget is reported with every key UNKNOWN."""
    if timeout_s <= 0:
        raise errors.ConfigError(f"timeout_s must be > 0, got {timeout_s:g}: an unbounded check "
                                 "could never report 'unknown'")
    binary = checker or resolve.resolve(CHECKER, progress=log.info)
    operations = prepare(history)
    end = max((op.ret for op in history.operations), default=0.0)
    workdir.mkdir(parents=True, exist_ok=True)
    given, verdict = workdir / INPUT, workdir / VERDICT
    given.write_text(json.dumps({"operations": operations,
                                 "annotations": _annotations(faults, end)}))
    argv = [str(binary), "--history", str(given), "--out", str(verdict),
            "--visualize", str(workdir / VISUALIZATIONS),
            "--timeout", f"{max(1, round(timeout_s * _NS))}ns"]
    start = time.monotonic()
    try:
        processes.run(argv, timeout_s=timeout_s * 2 + 30)
    except subprocess.TimeoutExpired:
        keys = sorted({op["key"] for op in operations})
        return CheckReport(tuple(KeyCheck(k, KeyResult.UNKNOWN, 0, timeout_s) for k in keys),
                           len(operations), time.monotonic() - start, timeout_s, "")
    report = _parse(json.loads(verdict.read_text()), len(operations), time.monotonic() - start)
    log.info("history check: %d operations on %d keys in %.2f s: %s", report.operations,
             len(report.keys), report.seconds,
             ", ".join(f"{k.key} {k.result}" for k in report.keys) or "nothing to check")
    return report


def explain(report: CheckReport, history: History) -> list[str]:
    """One line per illegal key naming the operations involved (first ``_MAX_NAMED``)."""
    by_id = {op.id: op for op in history.operations}
    lines = []
    for key in report.of(KeyResult.ILLEGAL):
        last = by_id.get(key.last_linearized) if key.last_linearized is not None else None
        prefix = (f"linearizable up to {last.describe()}" if last is not None
                  else "no operation linearizable")
        stuck = [by_id[i].describe() for i in key.frontier[:_MAX_NAMED] if i in by_id]
        more = f" (+{len(key.frontier) - _MAX_NAMED} more)" if len(key.frontier) > _MAX_NAMED else ""
        where = f"; see {key.visualization}" if key.visualization else ""
        lines.append(f"key {key.key}: {prefix}, state {key.state}; none of the next fits: "
                     f"{'; '.join(stuck)}{more}{where}")
    return lines


@dataclass(frozen=True, slots=True)
class HistoryFigures:
    """What a report shows of one history and its check (check fields None: not checked)."""

    read_mode: str
    operations: int
    """Recorded operations (the history's size)."""
    ops_per_s: float | None
    """Definite operations per second from the first call to the last return."""
    ops_per_s_before_fault: float | None
    checked: int | None
    """Operations given to porcupine (failed ones and failed reads dropped)."""
    check_seconds: float | None
    slowest_key_seconds: float | None
    non_linearizable_keys: float | None
    illegal: dict[str, str]
    """Illegal key → its visualization ('' when none was written)."""


def figures(history: History, report: CheckReport | None, *,
            fault_at: float | None) -> HistoryFigures:
    """The figures of ``history`` and its check (the rate before the fault: over the
    ``GUARD_WINDOW_S`` before ``fault_at``, as the guard judges it)."""
    started = history.started
    end = max((op.ret for op in history.operations), default=None)
    overall = history.rate(started, end) if started is not None and end is not None else None
    rate = history.rate_before(fault_at) if fault_at is not None else None
    if report is None:
        return HistoryFigures(str(history.plan.read_mode), len(history.operations), overall,
                              rate, None, None, None, None, {})
    return HistoryFigures(str(history.plan.read_mode), len(history.operations), overall, rate,
                          report.operations, report.seconds,
                          max((k.seconds for k in report.keys), default=0.0),
                          report.non_linearizable_keys,
                          {k.key: str(k.visualization or "") for k in report.of(KeyResult.ILLEGAL)})


def judge(slo: Slo, history: History, report: CheckReport | None, *,
          fault_at: float | None) -> SloResult:
    """The SLO result of one history (``fault_at``: when the first fault was injected;
    None: no fault, no rate guard)."""
    plan = history.plan
    if fault_at is not None:
        rate = history.rate_before(fault_at)
        if rate is None or rate < plan.min_rate_ops_s:
            achieved = "no" if rate is None else f"{rate:.1f} ops/s of"
            return SloResult(slo.name, SloStatus.VOID, None, slo.max, slo.unit,
                             f"void: the traffic in the {GUARD_WINDOW_S:g} s before the fault "
                             f"ran {achieved} definite "
                             f"operations, under its minimum {plan.min_rate_ops_s:g} ops/s: "
                             "too little traffic to judge the history")
    if report is None:
        return evaluate(slo, None)
    result = evaluate(slo, report.non_linearizable_keys)
    checked = (f"{report.operations} operations on {len(report.keys)} keys checked in "
               f"{report.seconds:.2f} s")
    if result.status is SloStatus.NO_DATA:
        undecided = ", ".join(k.key for k in report.of(KeyResult.UNKNOWN)) or "none (no operations)"
        message = (f"undecided: the checker did not finish within {report.timeout_s:g} s per key "
                   f"(keys {undecided}); {checked}")
        return SloResult(slo.name, result.status, None, slo.max, slo.unit, message)
    message = f"{result.message}; {checked}"
    if result.status is SloStatus.FAIL:
        message += "\n" + "\n".join(explain(report, history))
    return SloResult(slo.name, result.status, result.observed, slo.max, slo.unit, message)
