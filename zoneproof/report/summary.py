"""``summary.json``: the run's verdict, each test's outcome, each SLO (target, measured, pass).

Built from pytest's own test reports: outcomes, durations and the ``slo:<name>``
properties the chaos tests record (``record_property``), so it works the same with or
without xdist.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA", "SLO_PROPERTY", "Outcome", "SloRow", "build", "slo_property", "slo_rows", "write"]

SCHEMA = "zoneproof.dev/v1/Summary"
SLO_PROPERTY = "slo:"
"""Prefix of the JUnit/pytest property holding one SLO result of a test."""
FAILING = frozenset({"failed", "error"})


@dataclass(frozen=True, slots=True)
class SloRow:
    """One SLO of one test: its target (``max``), what was measured, and whether it held."""

    test: str
    name: str
    status: str
    target: float
    measured: float | None
    unit: str

    @property
    def passed(self) -> bool:
        """PASS only; NO_DATA, FAIL and INVALID all fail."""
        return self.status == "PASS"


@dataclass
class Outcome:
    """One test's result: passed, failed, error, skipped, xfailed or xpassed."""

    nodeid: str
    outcome: str
    duration_s: float = 0.0
    slos: list[SloRow] = field(default_factory=list)
    message: str = ""


def slo_property(name: str, status: str, measured: float | None, target: float,
                 unit: str) -> tuple[str, str]:
    """The (name, value) a test records for one SLO result."""
    return (SLO_PROPERTY + name, json.dumps(
        {"status": status, "observed": measured, "threshold": target, "unit": unit}))


def slo_rows(nodeid: str, properties: list[tuple[str, object]]) -> list[SloRow]:
    """The SLO rows among a test's recorded properties."""
    rows = []
    for key, value in properties:
        if key.startswith(SLO_PROPERTY):
            data = json.loads(str(value))
            rows.append(SloRow(nodeid, key[len(SLO_PROPERTY):], data["status"],
                               data["threshold"], data["observed"], data["unit"]))
    return rows


def build(outcomes: list[Outcome], *, started: str, finished: str, duration_s: float,
          versions: dict[str, Any], exit_status: int) -> dict[str, Any]:
    """The summary document; ``verdict`` PASS only if pytest exited 0, nothing failed and
    every SLO passed."""
    counts = Counter(o.outcome for o in outcomes)
    slos = [row for o in outcomes for row in o.slos]
    failed = [o.nodeid for o in outcomes if o.outcome in FAILING]
    passed = exit_status == 0 and not failed and all(r.passed for r in slos) and bool(outcomes)
    return {
        "schema": SCHEMA, "verdict": "PASS" if passed else "FAIL", "pytest_exit": exit_status,
        "started": started, "finished": finished, "duration_s": round(duration_s, 1),
        "counts": dict(sorted(counts.items())),
        "failures": [{"test": o.nodeid, "message": o.message} for o in outcomes
                     if o.outcome in FAILING],
        "slos": [{**asdict(r), "pass": r.passed} for r in slos],
        "tests": [{"test": o.nodeid, "outcome": o.outcome, "duration_s": round(o.duration_s, 2)}
                  for o in outcomes],
        "versions": versions,
    }


def write(path: Path, summary: dict[str, Any]) -> Path:
    """Write ``summary`` as JSON to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1, default=str) + "\n")
    return path
