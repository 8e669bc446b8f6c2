"""The executor's process markers: a replica's exit is marked before its next start.

The model reads ``start X`` then ``exited X`` as the new incarnation gone; CI once saw that
order (the monitor thread had found the SIGKILLed replica gone, the schedule's next event
started it again before the monitor wrote its marker) and the reference controller failed
rule takeover falsely."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from zoneproof.conformance.ha_controller import executor
from zoneproof.conformance.ha_controller.schedule import Event


class _Replicas:
    """Replica processes by pid: ``start`` makes a new incarnation, ``kill`` ends one."""

    def __init__(self) -> None:
        self.records: dict[str, SimpleNamespace] = {}
        self.dead: set[int] = set()
        self.next_pid = 100

    def start(self, identity: str) -> None:
        self.next_pid += 1
        self.records[identity] = SimpleNamespace(pid=self.next_pid)

    def kill(self, identity: str) -> None:
        self.dead.add(self.records[identity].pid)

    def signal(self, identity: str, sig: object) -> None:
        """Signals are sent; their effect (``kill``) comes when the test says."""

    def alive(self, identity: str) -> bool:
        record = self.records.get(identity)
        return record is not None and record.pid not in self.dead


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> executor._Run:
    replicas = _Replicas()
    monkeypatch.setattr(executor.daemons, "alive", lambda r: r.pid not in replicas.dead)
    monkeypatch.setattr(executor.daemons, "exit_code", lambda r, timeout_s: -9)
    made = object.__new__(executor._Run)
    made.sid = "test"
    made.slot = SimpleNamespace(replicas=replicas, identities=["r-0", "r-1"])
    made.marks = []
    made.mark = made.marks.append  # type: ignore[method-assign]
    made.skipped, made.frozen, made.killed = [], set(), set()
    made.incarnations, made.exits_marked = threading.Lock(), {}
    made.stop_monitor = threading.Event()
    return made


def test_a_restart_marks_the_killed_incarnations_exit_first(run: executor._Run) -> None:
    replicas = run.slot.replicas
    run.start(Event("start", target="0"))
    run.start(Event("start", target="1"))
    with run.monitoring():
        run.signal(Event("signal", target="1", signal="SIGKILL"))
        replicas.kill("r-1")  # gone, and the monitor has not marked it yet
        run.start(Event("start", target="dead"))
    assert run.marks == ["start r-0", "start r-1", "sigkill r-1", "exited r-1 -9", "start r-1"]


def test_each_incarnation_exits_once_and_a_gone_one_before_the_schedule_is_none(
        run: executor._Run) -> None:
    replicas = run.slot.replicas
    replicas.start("r-0")
    replicas.kill("r-0")  # the slot's previous schedule's
    replicas.start("r-1")
    with run.monitoring():
        replicas.kill("r-1")
        for _ in range(3):
            with run.incarnations:
                for identity in list(replicas.records):
                    run.mark_exit(identity)
    assert run.marks == ["exited r-1 -9"]
