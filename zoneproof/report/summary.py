"""``summary.json``: the run's verdict, each test's outcome, each SLO result, versions and
the clusters tested (``zoneproof.runs.identity``: API server, kube-system UID, version).

Built from pytest's own test reports: outcomes, durations and the ``slo:<name>``
properties the chaos tests record (``report.junit``), so it works the same with or
without xdist. The document's shape is ``summary_file.SummaryFile`` (its JSON Schema ships
beside it); ``Summary.to_dict`` writes through it and ``load`` reads it back as a typed
``Summary`` (the CLI, benchmarks).
Each test's phases are timed (set-up, which makes a bed when the test is the first on its
worker to need one; start and end on the run's clock; the xdist worker), so the summary
says where the run's time went: per suite and per chaos experiment (``timing``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from zoneproof import errors
from zoneproof._util import schemas
from zoneproof.components.harness import kinds
from zoneproof.report import summary_file
from zoneproof.report.summary_file import SCHEMA
from zoneproof.runs.identity import ClusterIdentity
from zoneproof.slo.results import SloResult, SloStatus
from zoneproof.slo.verdict import NotJudged, RunVerdict, judge_run

__all__ = ["GATE_SUITES", "SCHEMA", "SELF_CHECK", "ItemResult", "Summary", "build",
           "experiment_of", "load", "suite_of", "write"]

FAILING = frozenset({"failed", "error"})
INTERRUPTED = "interrupted"
"""The outcome of a test a signal ended before its result was known: never passed."""
GATE_SUITES: dict[str, tuple[str, ...]] = {
    "conformance": tuple(dict.fromkeys(d for kind in kinds.every() for d in kind.spec.conformance)),
    "chaos": ("chaos",),
}
"""What the gate (qualify, certify) runs: suite → its directories in the checkout. Only what
judges the components under test: every kind's conformance suites (the kinds registry) and
the chaos experiments. zoneproof's own tests (tests/) and the self-check run in ``make test``."""
SELF_CHECK = "self_check"
"""The marker of the self-check: tests that prove an experiment or suite catches a broken
component (its broken twins). ``make test`` runs them; the gate only when asked
(``--self-check``); the summary says whether they ran."""
_SELF_CHECK_SUITE = "self-check"
_CHAOS_EXPERIMENT = "chaos/test_experiments.py::test_experiment["


def experiment_of(nodeid: str) -> str | None:
    """The chaos experiment a test runs (``...test_experiment[zone-outage]``), else None."""
    return nodeid[len(_CHAOS_EXPERIMENT):-1] if nodeid.startswith(_CHAOS_EXPERIMENT) else None


def suite_of(nodeid: str, *, self_check: bool = False) -> str:
    """The suite a test belongs to: its file's directory (``conformance/ha_config``,
    ``chaos``), or ``self-check`` for a self-check test."""
    if self_check:
        return _SELF_CHECK_SUITE
    path = nodeid.split("::", 1)[0]
    return path.rsplit("/", 1)[0] if "/" in path else path


@dataclass
class ItemResult:
    """One test's result: passed, failed, error, skipped, xfailed, xpassed or interrupted;
    ``message``: a failure's text, or why a test was skipped."""

    nodeid: str
    outcome: str
    duration_s: float = 0.0
    slos: list[SloResult] = field(default_factory=list)
    message: str = ""
    setup_s: float = 0.0
    """Its set-up's share of ``duration_s`` (a bed made for it counts here)."""
    start_s: float | None = None
    """When its set-up began, seconds after the run started (None: not known)."""
    end_s: float | None = None
    """When its teardown ended, seconds after the run started."""
    worker: str = ""
    """The xdist worker that ran it (``gw0``...; empty without xdist)."""
    self_check: bool = False
    """A self-check test (marked ``SELF_CHECK``)."""
    void_runs: int = 0
    """Runs of its experiment that judged nothing before the one its verdict is of."""

    @property
    def failed(self) -> bool:
        """Failed or errored."""
        return self.outcome in FAILING

    @property
    def suite(self) -> str:
        """``suite_of`` this test."""
        return suite_of(self.nodeid, self_check=self.self_check)

    def row(self) -> summary_file.TestRow:
        """Its row of summary.json's ``tests``."""
        return summary_file.TestRow(
            test=self.nodeid, outcome=self.outcome, suite=self.suite,  # type: ignore[arg-type]
            duration_s=round(self.duration_s, 2), setup_s=round(self.setup_s, 2),
            start_s=_rounded(self.start_s), end_s=_rounded(self.end_s), worker=self.worker,
            self_check=self.self_check, void_runs=self.void_runs)

    @classmethod
    def from_row(cls, row: summary_file.TestRow) -> ItemResult:
        """Inverse of ``row`` (without SLOs and message)."""
        return cls(row.test, row.outcome, row.duration_s, setup_s=row.setup_s,
                   start_s=row.start_s, end_s=row.end_s, worker=row.worker,
                   self_check=row.self_check, void_runs=row.void_runs)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


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

    @property
    def self_check(self) -> dict[str, Any]:
        """Whether the self-check ran (a test of it passed or failed), with its tests' counts."""
        tests = [o for o in self.outcomes if o.self_check]
        return {"ran": any(o.outcome in ("passed", *FAILING) for o in tests),
                "counts": dict(sorted(Counter(o.outcome for o in tests).items())),
                "failed": sorted(o.nodeid for o in tests if o.failed)}

    def suite_times(self) -> list[dict[str, Any]]:
        """Per suite: its tests, their summed time (``busy_s``), the set-up share of it, and
        its span on the run's clock (first start to last end: ``wall_s``), in order of start."""
        rows = []
        for suite in dict.fromkeys(o.suite for o in self.outcomes):
            tests = [o for o in self.outcomes if o.suite == suite]
            starts = [o.start_s for o in tests if o.start_s is not None]
            ends = [o.end_s for o in tests if o.end_s is not None]
            rows.append({"suite": suite, "tests": len(tests),
                         "busy_s": round(sum(o.duration_s for o in tests), 1),
                         "setup_s": round(sum(o.setup_s for o in tests), 1),
                         "start_s": _rounded(min(starts, default=None)),
                         "end_s": _rounded(max(ends, default=None)),
                         "wall_s": round(max(ends) - min(starts), 1) if starts and ends else None,
                         "workers": sorted({o.worker for o in tests if o.worker})})
        return sorted(rows, key=lambda r: (r["start_s"] is None, r["start_s"] or 0.0))

    def experiment_times(self) -> list[dict[str, Any]]:
        """Per chaos experiment run: outcome, time (set-up included, which is a bed's making
        when it was the first on its worker), start and end on the run's clock, worker, void
        runs before the judged one (their time included)."""
        rows = [{"experiment": name, "outcome": o.outcome,
                 "duration_s": round(o.duration_s, 1), "setup_s": round(o.setup_s, 1),
                 "start_s": _rounded(o.start_s), "end_s": _rounded(o.end_s), "worker": o.worker,
                 "void_runs": o.void_runs}
                for o in self.outcomes if (name := experiment_of(o.nodeid)) is not None]
        return sorted(rows, key=lambda r: (r["start_s"] is None, r["start_s"] or 0.0))

    def document(self) -> summary_file.SummaryFile:
        """The summary.json document (``summary_file.SummaryFile``)."""
        return summary_file.SummaryFile.model_validate({
            "schema": SCHEMA, "verdict": self.verdict, "pytest_exit": self.pytest_exit,
            "started": self.started, "finished": self.finished,
            "duration_s": round(self.duration_s, 1),
            "counts": dict(sorted(Counter(o.outcome for o in self.outcomes).items())),
            "slo_counts": self.slo_counts,
            "failures": [{"test": o.nodeid, "message": o.message} for o in self.failures],
            "slos": [{"test": test, **r.to_dict(), "pass": r.met} for test, r in self.slos],
            "tests": [o.row() for o in self.outcomes],
            "timing": {"suites": self.suite_times(), "experiments": self.experiment_times()},
            "self_check": self.self_check,
            "versions": self.versions,
            "clusters": [c.to_dict() for c in self.clusters],
            "not_judged": [n.to_dict() for n in self.not_judged],
            "interrupted_by": self.interrupted_by,
        })

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return self.document().to_json()

    @classmethod
    def from_dict(cls, data: object, source: str = "summary") -> Summary:
        """The summary ``to_dict`` wrote (or an earlier v2 writer); ConfigError naming
        ``source`` for another schema, or one line per problem."""
        found = data.get("schema") if isinstance(data, dict) else None
        if found != SCHEMA:
            raise errors.ConfigError(f"{source}: summary schema {found!r} is not {SCHEMA!r}: "
                                     "written by another zoneproof version, or not a summary")
        try:
            doc = summary_file.SummaryFile.model_validate(data)
        except pydantic.ValidationError as exc:
            problems = schemas.problems(exc, summary_file.SummaryFile)
            raise errors.ConfigError(f"{source} is not a zoneproof summary ({len(problems)} "
                                     "problem(s)):\n" + "\n".join(f"  - {p}" for p in problems)
                                     ) from None
        outcomes = {t.test: ItemResult.from_row(t) for t in doc.tests}
        for row in doc.slos:
            outcomes.setdefault(row.test, ItemResult(row.test, "passed")).slos.append(
                SloResult(row.name, SloStatus(row.status), row.observed, row.threshold, row.unit,
                          row.message))
        for failure in doc.failures:
            outcomes.setdefault(failure.test, ItemResult(failure.test, "failed")).message = \
                failure.message
        return cls(doc.verdict, doc.pytest_exit, doc.started, doc.finished, doc.duration_s,
                   tuple(outcomes.values()), dict(doc.versions),
                   tuple(ClusterIdentity(**c.model_dump()) for c in doc.clusters),
                   tuple(NotJudged(n.test, n.reason, n.asked) for n in doc.not_judged),
                   doc.interrupted_by)


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
    """Read a summary.json; ConfigError if it is missing, not JSON or not a summary."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise errors.ConfigError(f"cannot read the summary {path}: {exc}") from None
    return Summary.from_dict(data, str(path))
