"""The strict verdict of one chaos experiment, from its chaostoolkit journal and SLO results.

chaostoolkit says "completed" in cases a release gate must not accept: a process
activity that exited non-zero, a rollback that failed, a missing steady-state check. A
run passes only if every one of these holds:

- the run completed and did not deviate;
- the steady-state hypothesis was checked and met before and after;
- every method activity succeeded, and every process activity exited 0;
- every declared rollback ran and succeeded (process rollbacks exited 0);
- every fault took effect: each effect it declares was observed within its bound
  (``slo.effect_checks``);
- no SLO is void (the run could not be judged by it: e.g. too little traffic before the
  fault), and every SLO result is PASS.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zoneproof.slo.effect_checks import EffectCheck
from zoneproof.slo.results import SloResult, SloStatus

__all__ = ["Finding", "FindingKind", "Verdict", "judge"]


class FindingKind(enum.StrEnum):
    """Why a run failed; stable names for reports."""

    STATUS = "run-not-completed"
    DEVIATED = "deviated"
    STEADY_BEFORE = "steady-state-before-not-met"
    STEADY_AFTER = "steady-state-after-not-met"
    ACTIVITY_FAILED = "activity-failed"
    PROCESS_NONZERO = "process-exit-nonzero"
    ROLLBACK_FAILED = "rollback-failed"
    ROLLBACK_MISSING = "rollback-not-run"
    FAULT_NOT_EFFECTIVE = "fault-not-effective"
    VOID = "void"
    SLO = "slo-not-met"


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a run failed."""

    kind: FindingKind
    subject: str
    message: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """PASS only without findings."""

    findings: tuple[Finding, ...]

    @property
    def passed(self) -> bool:
        """True if nothing was found wrong."""
        return not self.findings

    def summary(self) -> str:
        """One line per finding, or PASS."""
        if self.passed:
            return "PASS"
        return "FAIL\n" + "\n".join(f"  {f.kind}: {f.subject}: {f.message}" for f in self.findings)


def _name(run: Mapping[str, Any]) -> str:
    return str((run.get("activity") or {}).get("name", "<unnamed>"))


def _activity_findings(runs: Sequence[Mapping[str, Any]], failed: FindingKind) -> list[Finding]:
    found = []
    for run in runs:
        name = _name(run)
        if run.get("status") != "succeeded":
            exception = "".join(run.get("exception") or [])[-300:].strip()
            found.append(Finding(failed, name, f"status {run.get('status')!r}: {exception}"))
            continue
        provider = (run.get("activity") or {}).get("provider") or {}
        output = run.get("output")
        if provider.get("type") == "process" and isinstance(output, Mapping) \
                and output.get("status") != 0:
            kind = FindingKind.PROCESS_NONZERO if failed is FindingKind.ACTIVITY_FAILED else failed
            stderr = str(output.get("stderr", ""))[-300:].strip()
            found.append(Finding(kind, name, f"exit {output.get('status')}: {stderr}"))
    return found


def _steady(journal: Mapping[str, Any], when: str, kind: FindingKind) -> list[Finding]:
    state = (journal.get("steady_states") or {}).get(when)
    if state is None:
        return [Finding(kind, "steady-state-hypothesis", f"not checked {when} the method")]
    if not state.get("steady_state_met"):
        failing = [_name(p) for p in state.get("probes", []) if not p.get("tolerance_met", True)]
        return [Finding(kind, "steady-state-hypothesis", f"not met {when}; probes: {failing}")]
    return []


def judge(journal: Mapping[str, Any], slo_results: Sequence[SloResult] = (),
          effects: Sequence[EffectCheck] = ()) -> Verdict:
    """The strict verdict of one experiment run (see the module docstring)."""
    found: list[Finding] = []
    if journal.get("status") != "completed":
        found.append(Finding(FindingKind.STATUS, "run", f"status {journal.get('status')!r}"))
    if journal.get("deviated"):
        found.append(Finding(FindingKind.DEVIATED, "run", "the steady state deviated"))
    found += _steady(journal, "before", FindingKind.STEADY_BEFORE)
    found += _steady(journal, "after", FindingKind.STEADY_AFTER)
    found += _activity_findings(journal.get("run") or [], FindingKind.ACTIVITY_FAILED)
    rollbacks = journal.get("rollbacks") or []
    found += _activity_findings(rollbacks, FindingKind.ROLLBACK_FAILED)
    declared = [a.get("name", "<unnamed>")
                for a in (journal.get("experiment") or {}).get("rollbacks") or []]
    ran = {_name(r) for r in rollbacks}
    found += [Finding(FindingKind.ROLLBACK_MISSING, name, "declared but not run")
              for name in declared if name not in ran]
    found += [Finding(FindingKind.FAULT_NOT_EFFECTIVE, f"{c.fault} {','.join(c.targets)}",
                      c.message) for c in effects if not c.effective]
    found += [Finding(FindingKind.VOID, r.name, r.message)
              for r in slo_results if r.status is SloStatus.VOID]
    found += [Finding(FindingKind.SLO, r.name, f"{r.status}: {r.message}")
              for r in slo_results if not r.met and r.status is not SloStatus.VOID]
    return Verdict(tuple(found))
