"""``summary.json``: the run's verdict, each test's outcome, each SLO result, versions and
the clusters tested (``zoneproof.runs.identity``: API server, kube-system UID, version).

Built from pytest's own test reports: outcomes, durations and the ``slo:<name>``
properties the chaos tests record (``report.junit``), so it works the same with or
without xdist. ``load`` reads it back as a typed ``Summary`` (the CLI, benchmarks).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoneproof import errors
from zoneproof.runs.identity import ClusterIdentity
from zoneproof.slo.results import SloResult
from zoneproof.slo.verdict import NotJudged, RunVerdict, judge_run

__all__ = ["SCHEMA", "ItemResult", "Summary", "build", "load", "write"]

SCHEMA = "zoneproof.dev/v2/Summary"
"""v2: an SLO row is ``SloResult.to_dict`` (observed, threshold, message) plus test, pass."""
FAILING = frozenset({"failed", "error"})
INTERRUPTED = "interrupted"
"""The outcome of a test a signal ended before its result was known: never passed."""


@dataclass
class ItemResult:
    """One test's result: passed, failed, error, skipped, xfailed, xpassed or interrupted;
    ``message``: a failure's text, or why a test was skipped."""

    nodeid: str
    outcome: str
    duration_s: float = 0.0
    slos: list[SloResult] = field(default_factory=list)
    message: str = ""

    @property
    def failed(self) -> bool:
        """Failed or errored."""
        return self.outcome in FAILING


@dataclass(frozen=True, slots=True)
class Summary:
    """The document; its verdict is ``slo.verdict.judge_run``'s (PASS only if everything
    that should have run ran and passed)."""

    verdict: str
    pytest_exit: int
    started: str
    finished: str
    duration_s: float
    outcomes: tuple[ItemResult, ...]
    versions: dict[str, Any]
    clusters: tuple[ClusterIdentity, ...] = ()
    """Every cluster the run tested, as ``zoneproof.runs.identity`` names it."""
    not_judged: tuple[NotJudged, ...] = ()
    """What should have judged the run and did not (a PARTIAL run's gaps), and why."""
    interrupted_by: str = ""
    """The signal that interrupted the run (INTERRUPTED), if one did."""

    @property
    def passed(self) -> bool:
        """True for a PASS verdict."""
        return self.verdict == RunVerdict.PASS

    @property
    def slos(self) -> list[tuple[str, SloResult]]:
        """(test, result) of every SLO judged."""
        return [(o.nodeid, r) for o in self.outcomes for r in o.slos]

    @property
    def slo_counts(self) -> dict[str, int]:
        """SLO results by status (PASS, FAIL, NO_DATA, INVALID, VOID): only PASS passed."""
        return dict(sorted(Counter(str(r.status) for _, r in self.slos).items()))

    @property
    def failures(self) -> list[ItemResult]:
        """The tests that failed or errored."""
        return [o for o in self.outcomes if o.failed]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return {
            "schema": SCHEMA, "verdict": self.verdict, "pytest_exit": self.pytest_exit,
            "started": self.started, "finished": self.finished,
            "duration_s": round(self.duration_s, 1),
            "counts": dict(sorted(Counter(o.outcome for o in self.outcomes).items())),
            "slo_counts": self.slo_counts,
            "failures": [{"test": o.nodeid, "message": o.message} for o in self.failures],
            "slos": [{"test": test, **r.to_dict(), "pass": r.met} for test, r in self.slos],
            "tests": [{"test": o.nodeid, "outcome": o.outcome,
                       "duration_s": round(o.duration_s, 2)} for o in self.outcomes],
            "versions": self.versions,
            "clusters": [c.to_dict() for c in self.clusters],
            "not_judged": [n.to_dict() for n in self.not_judged],
            "interrupted_by": self.interrupted_by,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Summary:
        """The summary ``to_dict`` wrote; ConfigError for another schema."""
        if data.get("schema") != SCHEMA:
            raise errors.ConfigError(f"summary schema {data.get('schema')!r} is not {SCHEMA!r}: "
                                     "written by another zoneproof version")
        outcomes = {t["test"]: ItemResult(t["test"], t["outcome"], float(t["duration_s"]))
                    for t in data["tests"]}
        for row in data["slos"]:
            outcomes.setdefault(row["test"], ItemResult(row["test"], "passed")).slos.append(
                SloResult.from_dict(row))
        for failure in data["failures"]:
            outcomes.setdefault(failure["test"], ItemResult(failure["test"], "failed")).message = \
                failure["message"]
        return cls(data["verdict"], int(data["pytest_exit"]), data["started"],
                   data["finished"], float(data["duration_s"]), tuple(outcomes.values()),
                   dict(data["versions"]),
                   tuple(ClusterIdentity.from_dict(c) for c in data.get("clusters", ())),
                   tuple(NotJudged.from_dict(n) for n in data.get("not_judged", ())),
                   str(data.get("interrupted_by") or ""))


def build(outcomes: list[ItemResult], *, started: str, finished: str, duration_s: float,
          versions: dict[str, Any], exit_status: int,
          clusters: list[ClusterIdentity] | None = None, interrupted_by: str = "",
          not_judged: list[NotJudged] | None = None) -> Summary:
    """The summary, its verdict judged once (``slo.verdict.judge_run``): INTERRUPTED if a
    signal ended the run (or a test was interrupted), FAIL if pytest did not exit 0, a test
    failed or an SLO was not met, PARTIAL if something that should have judged did not
    (``not_judged``), else PASS."""
    verdict = judge_run(
        ran=len(outcomes), failed=any(o.failed for o in outcomes),
        slos_met=all(r.met for o in outcomes for r in o.slos), exit_status=exit_status,
        interrupted=bool(interrupted_by) or any(o.outcome == INTERRUPTED for o in outcomes),
        not_judged=not_judged or ())
    return Summary(str(verdict), exit_status, started, finished, duration_s, tuple(outcomes),
                   versions, tuple(clusters or ()), tuple(not_judged or ()), interrupted_by)


def write(path: Path, summary: Summary) -> Path:
    """Write ``summary`` as JSON to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary.to_dict(), indent=1, default=str) + "\n")
    return path


def load(path: Path) -> Summary:
    """Read a summary.json; ConfigError if it is missing, not JSON or of another schema."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise errors.ConfigError(f"cannot read the summary {path}: {exc}") from None
    try:
        return Summary.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise errors.ConfigError(f"{path} is not a zoneproof summary: {exc!r}") from None
