"""Commands and reports round-trip through JSON; malformed ones are refused."""

from __future__ import annotations

import pytest

from zoneproof.nodeagent.protocol import Action, Command, Reason, Report, State, configmap_name


def test_command_and_report_round_trip() -> None:
    command = Command("abc", Action.STOP_KUBELET, 42.5)
    assert Command.from_json(command.to_json()) == command
    cut = Command("abd", Action.CUT_APISERVER, 30, endpoints=(("10.0.0.1", 6443), ("fc00::1", 443)))
    assert Command.from_json(cut.to_json()) == cut
    report = Report("abc", "stop-kubelet", State.REVERTED, 1.0, 2.0, Reason.SWITCH_EXPIRED)
    assert Report.from_json(report.to_json()) == report
    assert configmap_name("zp-worker2") == "node-zp-worker2"


@pytest.mark.parametrize("text", [
    "[]", '{"id": "x"}', '{"id": "", "action": "stop-kubelet", "max_duration_s": 5}',
    '{"id": "x", "action": "reboot", "max_duration_s": 5}',
    '{"id": "x", "action": "stop-kubelet", "max_duration_s": 0}',
    '{"id": "x", "action": "cut-apiserver", "max_duration_s": 5}',
    '{"id": "x", "action": "cut-apiserver", "max_duration_s": 5, "endpoints": [["10.0.0.1"]]}',
])
def test_malformed_commands_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Command.from_json(text)
