"""Processes by exact ownership token, termination by identity, signals that interrupt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from zoneproof._util import daemons, files, reaping, waiting

_SLEEP = "import time; print('up', flush=True); time.sleep(60)"


def _start(tmp_path: Path, name: str, **env: str) -> daemons.DaemonRecord:
    return daemons.start(name, [sys.executable, "-c", _SLEEP], tmp_path / f"{name}.log", env=env)


def test_token_matches_exactly_never_a_prefix_or_substring(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    mine = _start(tmp_path, "mine", **{reaping.BED_ENV: token})
    prefixed = _start(tmp_path, "longer", **{reaping.BED_ENV: token + "2"})
    # the token on a command line is not ownership either
    argv_only = daemons.start("argv", [sys.executable, "-c", _SLEEP, token], tmp_path / "a.log")
    try:
        found = {p.pid for p in reaping.with_token(reaping.BED_ENV, token)}
        assert found == {mine.pid}
        assert reaping.with_token(reaping.BED_ENV, token[:-1]) == []
        with pytest.raises(ValueError):
            reaping.with_token(reaping.BED_ENV, "")
    finally:
        for record in (mine, prefixed, argv_only):
            daemons.stop(record, timeout_s=5)


def test_drop_env_removes_the_run_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = uuid.uuid4().hex
    monkeypatch.setenv(reaping.RUN_ENV, run)
    inherits = _start(tmp_path, "inherits")
    dropped = daemons.start("dropped", [sys.executable, "-c", _SLEEP], tmp_path / "d.log",
                            drop_env=(reaping.RUN_ENV,))
    try:
        assert {p.pid for p in reaping.with_token(reaping.RUN_ENV, run)} == {inherits.pid}
    finally:
        daemons.stop(inherits, timeout_s=5)
        daemons.stop(dropped, timeout_s=5)


def test_terminate_escalates_and_spares_a_reused_pid(tmp_path: Path) -> None:
    stubborn = daemons.start("stubborn", [sys.executable, "-c",
                             "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
                             " print('up', flush=True); time.sleep(60)"], tmp_path / "s.log")
    waiting.wait_for(lambda: ("up" in (tmp_path / "s.log").read_text(), None), what="handler",
                     timeout_s=10)
    process = reaping.ProcessId(stubborn.pid, stubborn.start_ticks)
    impostor = reaping.ProcessId(stubborn.pid, stubborn.start_ticks + 1)
    assert process.alive() and not impostor.alive()
    assert reaping.terminate([impostor]) == []
    assert process.alive(), "a pid with another start time is not the recorded process"
    started = time.monotonic()
    assert reaping.terminate([process], grace_s=0.5) == [process]
    assert not process.alive() and time.monotonic() - started < 10


def test_sigterm_takes_the_ctrl_c_path(tmp_path: Path) -> None:
    code = ("from zoneproof._util import reaping; import time\n"
            "reaping.interrupt_on_terminate()\n"
            "try:\n    print('up', flush=True); time.sleep(60)\n"
            "except KeyboardInterrupt:\n    print('cleaned', flush=True); raise SystemExit(7)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 7
    assert proc.stdout.read().strip() == "cleaned"


def test_run_child_passes_an_interruption_on(tmp_path: Path) -> None:
    flag = tmp_path / "child-cleaned"
    child = ("import signal, sys, time\n"
             f"signal.signal(signal.SIGTERM, lambda *a: (open({str(flag)!r}, 'w').close(), "
             "sys.exit(3)))\ntime.sleep(60)\n")
    code = ("import sys; from zoneproof._util import reaping\n"
            "reaping.interrupt_on_terminate()\n"
            f"try:\n    reaping.run_child([sys.executable, '-c', {child!r}], grace_s=10)\n"
            "except KeyboardInterrupt:\n    sys.exit(130)\n")
    parent = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(1.5)
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=20) == 130
    assert flag.exists(), "the child got SIGTERM and cleaned up before the parent ended"


def test_private_files_and_dirs(tmp_path: Path) -> None:
    directory = files.private_dir(tmp_path / "a" / "b")
    assert directory.stat().st_mode & 0o777 == 0o700
    loose = tmp_path / "loose"
    loose.write_text("x")
    loose.chmod(0o644)
    files.write_private(loose, "secret")
    assert loose.stat().st_mode & 0o777 == 0o600 and loose.read_text() == "secret"
    assert os.stat(files.write_private(directory / "new", b"k")).st_mode & 0o777 == 0o600
