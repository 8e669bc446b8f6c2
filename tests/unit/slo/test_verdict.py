"""The strict verdict, on journals that real chaoslib runs produce and on each failure kind."""

from __future__ import annotations

import copy
import sys
from typing import Any

import pytest
from chaoslib.experiment import run_experiment

from zoneproof.slo import FindingKind, Slo, evaluate, judge


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
