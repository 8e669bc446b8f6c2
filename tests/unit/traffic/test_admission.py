"""AdmissionTraffic's streams (attempts replaced: the API calls run live in chaos/)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from zoneproof.measure import Timeline
from zoneproof.traffic import admission


def test_streams_attempt_at_once_and_every_attempt_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    lock = threading.Lock()

    def attempt(api: Any, timeline: Timeline, *, namespace: str, selected: bool, operation: str) -> bool:
        with lock:
            calls.append((threading.current_thread().name, operation))
            return len(calls) % 3 != 0

    monkeypatch.setattr(admission, "attempt", attempt)
    traffic = admission.AdmissionTraffic(None, Timeline(), namespace="ns",  # type: ignore[arg-type]
                                         interval_s=0.01, streams=3).start()
    time.sleep(0.3)
    traffic.stop()
    done = len(calls)
    time.sleep(0.05)
    assert len(calls) == done, "no attempt after stop"
    assert traffic.admitted + traffic.failed == done and traffic.failed == done // 3
    assert {name for name, _ in calls} == {f"AdmissionTraffic-{i}" for i in range(3)}
    assert {op for _, op in calls} == {"create", "update"}
