"""Runs: holdings undone newest first, processes by token, dead runs reaped, the keeper."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zoneproof import runs
from zoneproof._util import daemons, reaping, waiting


@pytest.fixture(autouse=True)
def state_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.delenv(reaping.RUN_ENV, raising=False)
    monkeypatch.setattr(runs, "_current", runs._Current())  # apart from this session's run
    yield tmp_path / "state"
    if runs.current() is not None:
        runs.close(print)


@pytest.fixture
def undone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []

    def note(holding: dict[str, Any], progress: Any) -> None:
        seen.append(holding["key"])

    monkeypatch.setitem(runs._REAPERS, "test", note)
    return seen


def test_close_undoes_holdings_newest_first_and_removes_the_run(undone: list[str]) -> None:
    run = runs.open_run("test", keeper=False)
    assert os.environ[reaping.RUN_ENV] == run.id
    assert (run.private("secrets").stat().st_mode & 0o777) == 0o700
    for key in ("first", "second", "third"):
        run.hold("test", key)
    run.hold("test", "second")  # a second hold is a no-op
    run.release("test", "third")
    assert runs.close(print) == []
    assert undone == ["second", "first"]
    assert not run.directory.exists() and reaping.RUN_ENV not in os.environ


def test_close_ends_processes_with_the_run_token(tmp_path: Path) -> None:
    run = runs.open_run("test", keeper=False)
    child = daemons.start("child", [sys.executable, "-c", "import time; time.sleep(60)"],
                          tmp_path / "c.log")
    bed_process = daemons.start("bed", [sys.executable, "-c", "import time; time.sleep(60)"],
                                tmp_path / "b.log", drop_env=(reaping.RUN_ENV,))
    try:
        runs.close(print)
        assert not daemons.alive(child), "the run's process ended with it"
        assert daemons.alive(bed_process), "a process without the token is not the run's"
    finally:
        daemons.stop(bed_process)
    assert not run.directory.exists()


def test_a_failing_holding_does_not_stop_the_others(undone: list[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(holding: dict[str, Any], progress: Any) -> None:
        raise RuntimeError("cluster unreachable")

    monkeypatch.setitem(runs._REAPERS, "boom", boom)
    run = runs.open_run("test", keeper=False)
    run.hold("test", "a")
    run.hold("boom", "b")
    run.hold("test", "c")
    problems = runs.close(print)
    assert undone == ["c", "a"]
    assert len(problems) == 1 and "cluster unreachable" in problems[0]


def test_reap_dead_takes_only_runs_whose_owner_died(state_root: Path, undone: list[str]) -> None:
    code = textwrap.dedent("""
        import sys, time
        from zoneproof import runs
        run = runs.open_run("victim", keeper=False)
        run.hold("test", sys.argv[1])
        print(run.id, flush=True)
        time.sleep(60)
    """)
    env = {**os.environ, "ZONEPROOF_STATE": str(state_root)}
    dead = subprocess.Popen([sys.executable, "-c", code, "dead"], stdout=subprocess.PIPE,
                            text=True, env=env)
    alive = subprocess.Popen([sys.executable, "-c", code, "alive"], stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        assert dead.stdout is not None and alive.stdout is not None
        dead_id, alive_id = dead.stdout.readline().strip(), alive.stdout.readline().strip()
        dead.send_signal(signal.SIGKILL)
        dead.wait()
        assert runs.reap_dead(print) == []
        assert undone == ["dead"]
        assert {r.id for r in runs.runs()} == {alive_id}
        assert dead_id != alive_id
        (record,) = runs.reaped()
        assert (record.id, record.kind, record.undone) == (dead_id, "victim", ("test dead",))
        assert "owner died" in record.why
    finally:
        alive.kill()
        alive.wait()


def test_fault_reverts_are_undone_before_the_rest(undone: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A namespace whose pods sit on a downed zone's nodes goes only once the fault is
    reverted: beds, repairs and uncordons come first, whatever their age."""
    monkeypatch.setitem(runs._REAPERS, "revert", runs._REAPERS["test"])
    monkeypatch.setattr(runs, "REVERTS_FAULTS", frozenset({"revert"}))
    run = runs.open_run("test", keeper=False)
    run.hold("revert", "old-fault")
    run.hold("test", "objects")
    run.hold("revert", "new-fault")
    assert runs.close(print) == []
    assert undone == ["new-fault", "old-fault", "objects"]
    assert runs.reaped() == [], "a run its owner closed is not shown as killed"


def test_the_keeper_reaps_a_killed_owner(state_root: Path, tmp_path: Path) -> None:
    flag = tmp_path / "orphan-started"
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from zoneproof._util import daemons
        from zoneproof import runs
        run = runs.open_run("victim")
        daemons.start("orphan", [sys.executable, "-c", "import time; time.sleep(120)"],
                      Path({str(tmp_path / 'o.log')!r}))
        Path({str(flag)!r}).write_text(run.id)
        time.sleep(120)
    """)
    owner = subprocess.Popen([sys.executable, "-c", code],
                             env={**os.environ, "ZONEPROOF_STATE": str(state_root)})
    waiting.wait_for(lambda: (flag.exists(), None), what="the owner's run", timeout_s=60)
    run_id = flag.read_text()
    assert reaping.with_token(reaping.RUN_ENV, run_id), "the orphan carries the run's token"
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    waiting.wait_for(lambda: (not runs.directory(run_id).exists(), None),
                     what="the keeper to reap the run", timeout_s=120)
    assert reaping.with_token(reaping.RUN_ENV, run_id) == []
    waiting.wait_for(lambda: (bool(runs.reaped()), None), what="the keeper's record",
                     timeout_s=30)
    (record,) = runs.reaped()
    assert record.id == run_id and "killed" in record.why


def test_the_keeper_leaves_a_closed_run_alone(state_root: Path) -> None:
    run = runs.open_run("test")
    keeper = reaping.ProcessId.from_dict((run.owner() or {})["keeper"])
    assert keeper.alive()
    runs.close(print)
    waiting.wait_for(lambda: (not keeper.alive(), None), what="the keeper to end", timeout_s=30)


def test_every_holding_kind_zoneproof_writes_has_a_declared_reaper() -> None:
    from zoneproof.cluster import nodeagent

    for kind in ("bed", "repair", "objects", "object", "uncordon", nodeagent.HOLDING):
        assert callable(runs._reaper(kind)), kind
    with pytest.raises(LookupError, match="no reaper for holdings of kind 'nonesuch'"):
        runs._reaper("nonesuch")
