"""What the zoneproof control stores in a chaostoolkit journal, read back without chaoslib
(the suites, benches and reports read journals; only zoneproof.chaos runs experiments)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zoneproof.slo import EffectCheck, SloResult, Verdict
from zoneproof.slo.verdict import Finding, FindingKind

__all__ = ["JOURNAL_KEY", "effect_checks", "history_record", "slo_results", "verdict"]

JOURNAL_KEY = "zoneproof"
"""The journal key under which the control stores its record of the run."""


def _recorded(journal: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return list((journal.get(JOURNAL_KEY) or {}).get(key, []))


def slo_results(journal: Mapping[str, Any]) -> list[SloResult]:
    """The SLO results the control stored in ``journal``."""
    return [SloResult.from_dict(r) for r in _recorded(journal, "slos")]


def history_record(journal: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The account of the run's register history and its check (None: the experiment ran
    no history traffic)."""
    record: Mapping[str, Any] | None = (journal.get(JOURNAL_KEY) or {}).get("history")
    return record


def effect_checks(journal: Mapping[str, Any]) -> list[EffectCheck]:
    """The fault effect checks the control stored in ``journal``."""
    return [EffectCheck.from_dict(c) for c in _recorded(journal, "effects")]


def verdict(journal: Mapping[str, Any]) -> Verdict:
    """The verdict the control judged the run by (``slo.judge``, once, when it closed the
    run); a journal without one failed (the control never closed the run)."""
    recorded = (journal.get(JOURNAL_KEY) or {}).get("verdict")
    if not isinstance(recorded, Mapping):
        return Verdict((Finding(FindingKind.STATUS, "run", "the zoneproof control recorded no "
                                "verdict: it did not close the run"),))
    return Verdict.from_dict(recorded)
