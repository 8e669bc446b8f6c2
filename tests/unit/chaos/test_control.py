"""What the control stores in a journal reads back as SloResults for the verdict."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from zoneproof.chaos import control, figures, session
from zoneproof.slo import Slo, SloStatus, evaluate, judge


def test_slo_results_round_trip_through_the_journal() -> None:
    slo = Slo(name="lease-failover", metric="lease_failover", max=9, unit="seconds")
    stored = [evaluate(slo, 6.5), evaluate(slo, None)]
    journal: dict[str, Any] = {control.JOURNAL_KEY: {
        "slos": [dataclasses.asdict(r) for r in stored]}}
    assert control.slo_results(journal) == stored
    assert [f.subject for f in judge(journal, control.slo_results(journal)).findings
            if f.kind == "slo-not-met"] == ["lease-failover"]
    assert control.slo_results({}) == []


def test_unknown_metric_has_no_figure() -> None:
    assert figures.compute("no_such_metric", cast(session.Run, None)) is None
    assert set(figures.METRICS) >= {"not_ready_detection", "lease_failover",
                                    "lost_acknowledged_writes", "deletes_by_non_holders"}
    assert SloStatus.NO_DATA == "NO_DATA"
