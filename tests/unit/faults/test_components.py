"""Faults of the components under test: the webhook is served again however its killed
process is still exiting (a multi-threaded server shows alive for a moment after SIGKILL)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from zoneproof._util import daemons
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness.kinds import Kind
from zoneproof.faults import FaultContext, Injector, StopWebhook
from zoneproof.measure import Timeline


@dataclass
class FakeWebhook:
    """A RunningWebhook's process part: a real process, registration recorded."""

    workdir: Path
    url: str = "https://127.0.0.1:1/webhooks/x"
    calls: list[str] = field(default_factory=list)
    record: daemons.DaemonRecord | None = None

    def start(self) -> FakeWebhook:
        self.calls.append("start")
        self.record = daemons.start("webhook", [sys.executable, "-c", "import time; time.sleep(60)"],
                                    self.workdir / "webhook.log")
        return self

    def stop(self) -> None:
        self.calls.append("stop")
        if self.record is not None:
            daemons.stop(self.record, timeout_s=5)


@dataclass
class FakeCluster:
    name: str = "fake"
    backend: str = "fake"
    capabilities: frozenset[Capability] = frozenset(Capability)


@pytest.mark.parametrize("exiting", [False, True], ids=["gone", "still-exiting"])
def test_a_killed_webhook_is_served_again_even_while_it_exits(
        exiting: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``still-exiting``: the revert comes while the killed process still shows alive (the
    signal not taken yet); it must not be mistaken for a webhook that is still serving."""
    if exiting:
        monkeypatch.setattr(StopWebhook, "inject", lambda self, context, targets: None)
    webhook = FakeWebhook(tmp_path).start()
    killed = webhook.record
    assert killed is not None
    cluster = cast(Cluster, FakeCluster())
    context = FaultContext(cluster, running={Kind.WEBHOOK: webhook})
    with Injector(cluster, Timeline()).injected(StopWebhook(), max_duration_s=60,
                                                context=context) as targets:
        assert targets == (webhook.url,)
    try:
        assert not daemons.alive(killed), "the killed process is gone"
        assert webhook.calls == ["start", "stop", "start"], "served again, registered anew"
        assert webhook.record is not killed and daemons.alive(webhook.record)
    finally:
        webhook.stop()
