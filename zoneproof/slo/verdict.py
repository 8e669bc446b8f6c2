"""The strict verdict of one chaos experiment, from its chaostoolkit journal and SLO results.

chaostoolkit says "completed" in cases a release gate must not accept: a process
activity that exited non-zero, a rollback that failed, a missing steady-state check. A
run passes only if every one of these holds:

- no signal (Ctrl-C, SIGTERM) interrupted it (the control records one in the journal);
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

from zoneproof.exit_codes import ExitCode
from zoneproof.slo.effect_checks import EffectCheck
from zoneproof.slo.results import SloResult, SloStatus

__all__ = ["NOT_APPLICABLE", "PARTIAL_EXIT", "Finding", "FindingKind", "NotJudged", "RunVerdict", "Verdict",
           "exit_code", "judge", "judge_run", "not_applicable"]


class FindingKind(enum.StrEnum):
    """Why a run failed; stable names for reports."""

    INTERRUPTED = "interrupted"
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

    @property
    def only_void(self) -> bool:
        """Found nothing but VOID SLOs: the run could not judge, nothing was found wrong
        (another run may judge; this one is no pass)."""
        return bool(self.findings) and all(f.kind is FindingKind.VOID for f in self.findings)

    @property
    def interrupted(self) -> bool:
        """True if a signal interrupted the run (its results are incomplete)."""
        return any(f.kind is FindingKind.INTERRUPTED for f in self.findings)

    def summary(self) -> str:
        """One line per finding, or PASS (INTERRUPTED when a signal ended the run)."""
        if self.passed:
            return "PASS"
        head = "INTERRUPTED" if self.interrupted else "FAIL"
        return head + "\n" + "\n".join(f"  {f.kind}: {f.subject}: {f.message}" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the journal's ``verdict``)."""
        return {"passed": self.passed, "summary": self.summary(),
                "findings": [{"kind": str(f.kind), "subject": f.subject, "message": f.message}
                             for f in self.findings]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """Inverse of ``to_dict``."""
        return cls(tuple(Finding(FindingKind(f["kind"]), str(f["subject"]), str(f["message"]))
                         for f in data.get("findings", ())))


INTERRUPTED_KEY = ("zoneproof", "interrupted_by")
"""Where the zoneproof control records the signal that interrupted a run in its journal."""


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
    signal_name = (journal.get(INTERRUPTED_KEY[0]) or {}).get(INTERRUPTED_KEY[1])
    if signal_name:
        found.append(Finding(FindingKind.INTERRUPTED, "run", f"{signal_name} ended the run "
                             "before it finished: nothing it would have judged is known"))
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


# -- the run's verdict ---------------------------------------------------------------------

class RunVerdict(enum.StrEnum):
    """The verdict of a whole run (summary.json's ``verdict``); only PASS passes.

    PASS: everything that should have run ran and passed. FAIL: something failed, an SLO
    was not met, or the run could not judge anything. PARTIAL: nothing failed, but tests or
    experiments that should have judged the components did not (skipped, not selected).
    INTERRUPTED: a signal (Ctrl-C, SIGTERM) ended the run before it finished.
    """

    PASS = "PASS"
    FAIL = "FAIL"
    PARTIAL = "PARTIAL"
    INTERRUPTED = "INTERRUPTED"


NOT_APPLICABLE = "not applicable: "
"""The start of a skip reason that says the test cannot apply to what is tested (an
in-cluster experiment for host components, a broken twin the component has no variant
for): such a test is not counted as not judged. Every other skip is."""


def not_applicable(reason: str) -> str:
    """A skip reason saying the test does not apply here (see ``NOT_APPLICABLE``)."""
    return reason if reason.startswith(NOT_APPLICABLE) else f"{NOT_APPLICABLE}{reason}"


@dataclass(frozen=True, slots=True)
class NotJudged:
    """A test or experiment that should have judged the run and did not, and why;
    ``asked``: the user's own selection left it out (``--only``, ``--skip``)."""

    test: str
    reason: str
    asked: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"test": self.test, "reason": self.reason, "asked": self.asked}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NotJudged:
        """Inverse of ``to_dict``."""
        return cls(str(data["test"]), str(data["reason"]), bool(data.get("asked", False)))


#: pytest's exit status of an interrupted session (``pytest.ExitCode.INTERRUPTED``).
PYTEST_INTERRUPTED = 2
#: Exit status of a PARTIAL run the user did not ask for (1 is FAIL, 2 a usage error).
PARTIAL_EXIT = ExitCode.PARTIAL


def judge_run(*, ran: int, failed: bool, slos_met: bool, exit_status: int,
              interrupted: bool, not_judged: Sequence[NotJudged]) -> RunVerdict:
    """The run's verdict from its ``ran`` tests (outcomes recorded), whether any failed,
    whether every SLO held, pytest's exit status, whether a signal ended it and what it did
    not judge. An interruption wins over everything: its results are incomplete."""
    if interrupted or exit_status == PYTEST_INTERRUPTED:
        return RunVerdict.INTERRUPTED
    if failed or not slos_met or exit_status != 0 or not ran:
        return RunVerdict.FAIL
    return RunVerdict.PARTIAL if not_judged else RunVerdict.PASS


def exit_code(verdict: RunVerdict | str, not_judged: Sequence[NotJudged] = (),
              signal_number: int | None = None) -> int:
    """The exit status a run with ``verdict`` ends with: 0 PASS (and a PARTIAL whose every
    gap the user asked for), 1 FAIL, ``PARTIAL_EXIT`` PARTIAL, 128 + the signal
    INTERRUPTED (130 SIGINT, 143 SIGTERM; 130 when the signal is not known): the rows of
    ``exit_codes.ExitCode`` a verdict uses."""
    if verdict == RunVerdict.PASS:
        return ExitCode.PASS
    if verdict == RunVerdict.PARTIAL:
        return ExitCode.PASS if all(n.asked for n in not_judged) else PARTIAL_EXIT
    if verdict == RunVerdict.INTERRUPTED:
        return 128 + (signal_number or 2)
    return ExitCode.FAIL
