"""What the control stores in a journal reads back as SloResults and effect checks for the
verdict; bad fault activities are refused before the run starts."""

from __future__ import annotations

from typing import Any

import pytest

from zoneproof import errors
from zoneproof.chaos import control
from zoneproof.report.journal import JOURNAL_KEY, effect_checks, slo_results
from zoneproof.slo import EffectCheck, Slo, evaluate, judge


def test_slo_results_and_effects_round_trip_through_the_journal() -> None:
    slo = Slo(name="lease-failover", metric="lease_failover", max=9, unit="seconds")
    stored = [evaluate(slo, 6.5), evaluate(slo, None)]
    checks = [EffectCheck("stop-webhook", ("https://h",), "webhook-down", 1.0, None, False,
                          "never observed")]
    journal: dict[str, Any] = {JOURNAL_KEY: {
        "slos": [r.to_dict() for r in stored], "effects": [c.to_dict() for c in checks]}}
    assert slo_results(journal) == stored
    assert effect_checks(journal) == checks
    findings = judge(journal, slo_results(journal), effect_checks(journal)).findings
    assert [(f.kind, f.subject) for f in findings if f.kind in ("slo-not-met",
                                                                "fault-not-effective")] == [
        ("fault-not-effective", "stop-webhook https://h"), ("slo-not-met", "lease-failover")]
    assert slo_results({}) == [] and effect_checks({}) == []


def _experiment(*arguments: dict[str, Any]) -> dict[str, Any]:
    return {"method": [{"name": f"a{i}", "provider": {
        "type": "python", "module": "zoneproof.chaos.actions", "func": "inject_fault",
        "arguments": a}} for i, a in enumerate(arguments)], "rollbacks": []}


def test_check_faults_names_each_bad_activity() -> None:
    control.check_faults(_experiment({"fault": "zone-outage", "parameters": {"zone": "z"}}))
    with pytest.raises(errors.ConfigError) as caught:
        control.check_faults(_experiment({"fault": "zone-outage", "parameters": {"zones": "z"}},
                                         {"fault": "kill-etcd-quorum"},
                                         {"fault": "unplug-the-rack"}))
    text = str(caught.value)
    assert "activity 'a0': fault zone-outage: unknown parameters ['zones']" in text
    assert "activity 'a2': unknown fault 'unplug-the-rack'" in text and "'a1'" not in text
