"""The strict verdict, on journals that real chaoslib runs produce and on each failure kind."""

from __future__ import annotations

import copy
import signal
import sys
from typing import Any

import pytest
from chaoslib.experiment import run_experiment

from zoneproof.slo import Finding, FindingKind, Slo, Verdict, evaluate, judge
from zoneproof.slo.verdict import (
    NOT_APPLICABLE,
    PARTIAL_EXIT,
    NotJudged,
    RunVerdict,
    exit_code,
    judge_run,
    not_applicable,
)


def _probe(name: str, ok: bool) -> dict[str, Any]:
    return {"type": "probe", "name": name, "tolerance": True,
            "provider": {"type": "python", "module": "os.path", "func": "isdir",
                         "arguments": {"s": "/" if ok else "/nonexistent/zoneproof"}}}


def _process(name: str, code: int) -> dict[str, Any]:
    return {"type": "action", "name": name,
            "provider": {"type": "process", "path": sys.executable,
                         "arguments": f"-c 'import sys; sys.exit({code})'"}}


def _experiment(method: list[dict[str, Any]], rollbacks: list[dict[str, Any]] | None = None,
                steady_ok: bool = True) -> dict[str, Any]:
    return {"version": "1.0.0", "title": "t", "description": "d",
            "steady-state-hypothesis": {"title": "ok", "probes": [_probe("healthy", steady_ok)]},
            "method": method, "rollbacks": rollbacks or []}


def _run(experiment: dict[str, Any]) -> dict[str, Any]:
    journal: dict[str, Any] = run_experiment(experiment)
    return journal


@pytest.fixture(scope="module")
def passing_journal() -> dict[str, Any]:
    return _run(_experiment([_process("ok", 0)], rollbacks=[_process("undo", 0)]))


def test_clean_run_passes(passing_journal: dict[str, Any]) -> None:
    verdict = judge(passing_journal)
    assert verdict.passed, verdict.summary()


def test_nonzero_process_fails_though_chaostoolkit_says_completed() -> None:
    journal = _run(_experiment([_process("boom", 3)]))
    assert journal["status"] == "completed"  # chaostoolkit's own view
    kinds = [f.kind for f in judge(journal).findings]
    assert kinds == [FindingKind.PROCESS_NONZERO]


def test_failed_rollback_process_fails() -> None:
    journal = _run(_experiment([_process("ok", 0)], rollbacks=[_process("undo", 1)]))
    assert [f.kind for f in judge(journal).findings] == [FindingKind.ROLLBACK_FAILED]


def test_steady_state_not_met_before_fails() -> None:
    journal = _run(_experiment([_process("ok", 0)], steady_ok=False))
    kinds = {f.kind for f in judge(journal).findings}
    assert FindingKind.STEADY_BEFORE in kinds


def test_raised_action_fails() -> None:
    raising = {"type": "action", "name": "raises",
               "provider": {"type": "python", "module": "os", "func": "rmdir",
                            "arguments": {"path": "/nonexistent/zoneproof"}}}
    kinds = {f.kind for f in judge(_run(_experiment([raising]))).findings}
    assert FindingKind.ACTIVITY_FAILED in kinds


def test_missing_steady_after_and_rollback_not_run(passing_journal: dict[str, Any]) -> None:
    journal = copy.deepcopy(passing_journal)
    journal["steady_states"]["after"] = None
    journal["rollbacks"] = []
    journal["status"] = "interrupted"
    kinds = [f.kind for f in judge(journal).findings]
    assert kinds == [FindingKind.STATUS, FindingKind.STEADY_AFTER, FindingKind.ROLLBACK_MISSING]


def test_deviated_and_slo_failures(passing_journal: dict[str, Any]) -> None:
    journal = copy.deepcopy(passing_journal)
    journal["deviated"] = True
    slo = Slo(name="lease-failover", metric="lease_failover", max=9, unit="seconds")
    verdict = judge(journal, [evaluate(slo, 12.0), evaluate(slo, None), evaluate(slo, 3.0)])
    assert [f.kind for f in verdict.findings] == [FindingKind.DEVIATED, FindingKind.SLO,
                                                  FindingKind.SLO]
    assert "FAIL" in verdict.summary() and "NO_DATA" in verdict.summary()


# -- the run's verdict ---------------------------------------------------------------------

def _judged_run(**given: object) -> RunVerdict:
    found: dict[str, object] = {"ran": 3, "failed": False, "slos_met": True, "exit_status": 0,
                                "interrupted": False, "not_judged": ()}
    found.update(given)
    return judge_run(**found)  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "expected"), [
    ({}, RunVerdict.PASS),
    ({"failed": True}, RunVerdict.FAIL),
    ({"slos_met": False}, RunVerdict.FAIL),
    ({"exit_status": 1}, RunVerdict.FAIL),
    ({"ran": 0}, RunVerdict.FAIL),
    ({"not_judged": (NotJudged("t", "skipped"),)}, RunVerdict.PARTIAL),
    ({"not_judged": (NotJudged("t", "skipped"),), "failed": True}, RunVerdict.FAIL),
    ({"interrupted": True}, RunVerdict.INTERRUPTED),
    ({"exit_status": 2}, RunVerdict.INTERRUPTED),
    ({"interrupted": True, "failed": True}, RunVerdict.INTERRUPTED),
], ids=["pass", "failed", "slo", "exit", "nothing-ran", "partial", "partial-failed",
        "interrupted", "pytest-interrupted", "interrupted-wins"])
def test_the_run_verdict(given: dict[str, object], expected: RunVerdict) -> None:
    assert _judged_run(**given) is expected


def test_exit_codes_say_the_verdict() -> None:
    asked, unasked = NotJudged("t", "not selected", asked=True), NotJudged("u", "skipped")
    assert exit_code(RunVerdict.PASS) == 0
    assert exit_code(RunVerdict.FAIL) == 1
    assert exit_code(RunVerdict.PARTIAL, [asked]) == 0, "a subset the user asked for"
    assert exit_code(RunVerdict.PARTIAL, [asked, unasked]) == PARTIAL_EXIT != 0
    assert exit_code(RunVerdict.INTERRUPTED, signal_number=signal.SIGINT) == 130
    assert exit_code(RunVerdict.INTERRUPTED, signal_number=signal.SIGTERM) == 143
    assert exit_code("INTERRUPTED") == 130


def test_an_interruption_recorded_in_the_journal_is_judged_interrupted() -> None:
    journal = {"status": "interrupted", "zoneproof": {"interrupted_by": "SIGTERM"}}
    verdict = judge(journal)
    assert verdict.interrupted and not verdict.passed
    assert verdict.summary().startswith("INTERRUPTED") and "SIGTERM" in verdict.summary()
    assert Verdict.from_dict(verdict.to_dict()) == verdict


def test_not_applicable_marks_a_skip_reason_once() -> None:
    once = not_applicable("the scale profile runs only when asked")
    assert once.startswith(NOT_APPLICABLE) and not_applicable(once) == once


@pytest.mark.parametrize(("kinds", "only_void"), [
    ((), False),
    ((FindingKind.VOID,), True),
    ((FindingKind.VOID, FindingKind.VOID), True),
    ((FindingKind.VOID, FindingKind.SLO), False),
    ((FindingKind.SLO,), False),
])
def test_only_void_means_nothing_but_void_was_found(kinds: tuple[FindingKind, ...],
                                                    only_void: bool) -> None:
    verdict = Verdict(tuple(Finding(k, "history-linearizable", "void: ...") for k in kinds))
    assert verdict.only_void is only_void
    assert verdict.passed is (not kinds)
