"""Detached processes: start, liveness (incl. pid reuse), stop with escalation."""

import dataclasses
import signal
import sys
from pathlib import Path

from zoneproof._util import daemons, waiting


def _sleeper(tmp_path: Path, marker: str, *, ignore_term: bool = False) -> daemons.DaemonRecord:
    code = ("import signal,time\n"
            + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
            + "print('ready', flush=True)\ntime.sleep(60)\n")
    return daemons.start("sleeper", [sys.executable, "-c", code, marker], tmp_path / "s.log")


def test_start_alive_stop(tmp_path: Path) -> None:
    record = _sleeper(tmp_path, "m1")
    assert daemons.alive(record)
    daemons.stop(record, timeout_s=5)
    assert not daemons.alive(record)
    assert not daemons.send(record, signal.SIGTERM)


def test_stop_escalates_to_sigkill(tmp_path: Path) -> None:
    record = _sleeper(tmp_path, "m2", ignore_term=True)
    # wait until the handler is installed: the child prints after setting it
    from zoneproof._util import waiting
    waiting.wait_for(lambda: ("ready" in Path(record.log).read_text(), None),
                     what="sleeper ready", timeout_s=10)
    daemons.stop(record, timeout_s=0.5)
    assert not daemons.alive(record)


def test_reused_pid_is_not_alive(tmp_path: Path) -> None:
    record = _sleeper(tmp_path, "m3")
    impostor = dataclasses.replace(record, start_ticks=record.start_ticks + 1)
    assert not daemons.alive(impostor)
    daemons.stop(record)


def test_record_round_trip(tmp_path: Path) -> None:
    record = _sleeper(tmp_path, "m4")
    assert daemons.DaemonRecord.from_dict(record.to_dict()) == record
    daemons.stop(record)


def test_exit_code_of_a_process_that_ended_with_threads_still_running(tmp_path: Path) -> None:
    """The main thread exits non-zero while another thread sleeps: the code is read once
    the whole process is reaped, not None from the zombie-leader window."""
    code = ("import os, threading, time\n"
            "threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()\n"
            "os._exit(3)\n")
    record = daemons.start("threads", [sys.executable, "-c", code], tmp_path / "t.log")
    waiting.wait_for(lambda: (not daemons.alive(record), None), what="exit", timeout_s=10,
                     interval_s=0.01)
    assert daemons.exit_code(record) == 3


def test_exit_code_of_a_running_process_is_none(tmp_path: Path) -> None:
    record = _sleeper(tmp_path, "zp-test-running")
    try:
        assert daemons.exit_code(record, timeout_s=0.2) is None
    finally:
        daemons.stop(record, timeout_s=5)
