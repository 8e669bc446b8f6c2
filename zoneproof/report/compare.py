"""Two runs side by side: ``zoneproof compare RUN_A RUN_B`` — per SLO and per test, what changed
from A (the earlier, the baseline) to B, with the regressions flagged.

How noise is judged (one run per side gives no spread to measure, so the rule is fixed and
stated in every comparison):

- an SLO **regressed** when its status got worse (PASS to anything else), or when its figure
  rose by more than both ``BOUND_NOISE`` of its bound and ``VALUE_NOISE`` of A's figure (every
  SLO is "at most its bound": higher is worse); a fall that large is an improvement, anything
  smaller is noise;
- a test **regressed** when it passed in A and in B failed, errored, was interrupted or was
  skipped (no longer judged), or is missing from B;
- a test's duration is shown when it changed by more than both ``DURATION_NOISE`` and
  ``DURATION_FLOOR_S``, but never flagged: speed is measured by the benchmarks, as medians.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from zoneproof.report.results import RunResults
from zoneproof.report.testids import experiment_of
from zoneproof.slo.results import SloResult

__all__ = ["BOUND_NOISE", "DURATION_FLOOR_S", "DURATION_NOISE", "NOISE_RULE", "VALUE_NOISE",
           "Comparison", "SloChange", "OutcomeChange", "compare"]

BOUND_NOISE = 0.10
VALUE_NOISE = 0.20
DURATION_NOISE = 0.50
DURATION_FLOOR_S = 10.0
NOISE_RULE = (f"a regression is a status that got worse, or an SLO figure that rose by more than "
              f"both {BOUND_NOISE:.0%} of its bound and {VALUE_NOISE:.0%} of run A's figure "
              f"(smaller moves are noise); a test that passed in A and not in B; durations "
              f"that moved by more than {DURATION_NOISE:.0%} and {DURATION_FLOOR_S:g} s are "
              "shown, not flagged")
_GOOD_OUTCOMES = frozenset({"passed", "xfailed"})


@dataclass(frozen=True, slots=True)
class SloChange:
    """One SLO of one experiment in both runs (None: not judged in that run)."""

    experiment: str
    name: str
    a: SloResult | None
    b: SloResult | None

    @property
    def delta(self) -> float | None:
        """B's figure minus A's, when both were measured."""
        if self.a is None or self.b is None or self.a.observed is None or self.b.observed is None:
            return None
        return self.b.observed - self.a.observed

    @property
    def change(self) -> str:
        """regressed, improved, unchanged, new or gone."""
        if self.a is None:
            return "new"
        if self.b is None:
            return "gone" if not self.a.met else "regressed"
        if self.a.met and not self.b.met:
            return "regressed"
        if self.b.met and not self.a.met:
            return "improved"
        delta = self.delta
        if delta is None or abs(delta) <= max(BOUND_NOISE * self.b.threshold,
                                              VALUE_NOISE * abs(self.a.observed or 0.0)):
            return "unchanged" if self.a.status == self.b.status else "changed"
        return "regressed" if delta > 0 else "improved"

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"experiment": self.experiment, "slo": self.name, "change": self.change,
                "a": None if self.a is None else self.a.to_dict(),
                "b": None if self.b is None else self.b.to_dict(), "delta": self.delta}


@dataclass(frozen=True, slots=True)
class OutcomeChange:
    """One test in both runs: its outcome and duration (None: not in that run)."""

    test: str
    a: tuple[str, float] | None
    b: tuple[str, float] | None

    @property
    def change(self) -> str:
        """regressed, fixed, new, gone, slower, faster or unchanged."""
        if self.a is None:
            return "new"
        if self.b is None:
            return "regressed" if self.a[0] in _GOOD_OUTCOMES else "gone"
        good_a, good_b = self.a[0] in _GOOD_OUTCOMES, self.b[0] in _GOOD_OUTCOMES
        if good_a and not good_b:
            return "regressed"
        if good_b and not good_a:
            return "fixed"
        if self.a[0] != self.b[0]:
            return "changed"
        moved = self.b[1] - self.a[1]
        if abs(moved) > max(DURATION_FLOOR_S, DURATION_NOISE * self.a[1]):
            return "slower" if moved > 0 else "faster"
        return "unchanged"

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        def side(value: tuple[str, float] | None) -> dict[str, Any] | None:
            return None if value is None else {"outcome": value[0], "duration_s": value[1]}

        return {"test": self.test, "change": self.change, "a": side(self.a), "b": side(self.b)}


def _describe(result: SloResult | None) -> str:
    if result is None:
        return "not judged"
    measured = "no data" if result.observed is None else f"{result.observed:.2f}"
    return f"{measured} {result.status}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """Run A (the baseline) against run B."""

    a: RunResults
    b: RunResults
    slos: tuple[SloChange, ...]
    tests: tuple[OutcomeChange, ...]

    @property
    def regressions(self) -> list[str]:
        """Every SLO and test flagged as regressed, one line each."""
        return ([f"SLO {c.name} of {c.experiment}: {_describe(c.a)} -> {_describe(c.b)}"
                 for c in self.slos if c.change == "regressed"]
                + [f"test {c.test}: {c.a[0] if c.a else '-'} -> {c.b[0] if c.b else 'missing'}"
                   for c in self.tests if c.change == "regressed"])

    def to_dict(self) -> dict[str, Any]:
        """What ``-o json|yaml`` prints."""
        return {"a": {"run": self.a.name, "verdict": self.a.summary.verdict},
                "b": {"run": self.b.name, "verdict": self.b.summary.verdict},
                "noise": NOISE_RULE, "regressions": self.regressions,
                "slos": [c.to_dict() for c in self.slos],
                "tests": [c.to_dict() for c in self.tests if c.change != "unchanged"]}

    def text(self) -> list[str]:
        """What ``-o text`` prints: the verdicts, every SLO, the tests that changed."""
        lines = [f"A {self.a.name}: {self.a.summary.verdict}   B {self.b.name}: "
                 f"{self.b.summary.verdict}", ""]
        lines.append(f"{'SLO':<34}{'experiment':<34}{'A':>16}{'B':>16}{'delta':>9}  change")
        for c in self.slos:
            delta = "" if c.delta is None else f"{c.delta:+.2f}"
            flag = "  <<" if c.change == "regressed" else ""
            lines.append(f"{c.name:<34}{c.experiment:<34}{_describe(c.a):>16}{_describe(c.b):>16}"
                         f"{delta:>9}  {c.change}{flag}")
        changed = [c for c in self.tests if c.change != "unchanged"]
        lines += ["", f"tests: {len(self.tests)} in either run, {len(changed)} changed"]
        for t in changed:
            a = "-" if t.a is None else f"{t.a[0]} {t.a[1]:.1f}s"
            b = "-" if t.b is None else f"{t.b[0]} {t.b[1]:.1f}s"
            flag = "  <<" if t.change == "regressed" else ""
            lines.append(f"  {t.change:<10}{t.test}: {a} -> {b}{flag}")
        found = self.regressions
        lines += ["", f"{len(found)} regression(s) beyond noise" + (":" if found else "")]
        lines += [f"  {r}" for r in found]
        lines.append(f"noise: {NOISE_RULE}")
        return lines


def _slos(run: RunResults) -> dict[tuple[str, str], SloResult]:
    return {(experiment_of(test), r.name): r for test, r in run.summary.slos}


def _tests(run: RunResults) -> dict[str, tuple[str, float]]:
    return {o.nodeid: (o.outcome, o.duration_s) for o in run.summary.outcomes}


def _keys(*maps: Iterable[Any]) -> list[Any]:
    return sorted({key for mapping in maps for key in mapping})


def compare(a: RunResults, b: RunResults) -> Comparison:
    """What changed from ``a`` to ``b``."""
    slos_a, slos_b = _slos(a), _slos(b)
    tests_a, tests_b = _tests(a), _tests(b)
    return Comparison(
        a, b,
        tuple(SloChange(exp, name, slos_a.get((exp, name)), slos_b.get((exp, name)))
              for exp, name in _keys(slos_a, slos_b)),
        tuple(OutcomeChange(t, tests_a.get(t), tests_b.get(t)) for t in _keys(tests_a, tests_b)))
