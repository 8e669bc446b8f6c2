"""Detached long-running processes: start, check, stop (TERM then KILL).

A process outlives the Python that started it (``zoneproof up`` returns, ``down`` is
another command), so each is tracked by a DaemonRecord (pid + kernel start time, which
guards against pid reuse) that callers persist. It inherits this process's environment,
so the run's token (``reaping.RUN_ENV``) with it; a caller that starts a process for
something else (a bed) passes that owner's token in ``env`` and drops the run's.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zoneproof._util import reaping, waiting

__all__ = ["DaemonRecord", "alive", "exit_code", "send", "start", "stop", "stop_together"]

log = logging.getLogger(__name__)

#: Children started by this interpreter, kept so they are reaped (no zombies) and never GC'd.
_children: dict[int, subprocess.Popen[bytes]] = {}
#: Children that have ended, kept for their exit codes.
_ended: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True, slots=True)
class DaemonRecord:
    """A started process: name, argv, log file, pid and kernel start time."""

    name: str
    argv: tuple[str, ...]
    log: str
    pid: int
    start_ticks: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DaemonRecord:
        """Inverse of to_dict."""
        return cls(**{**data, "argv": tuple(data["argv"])})


def start(name: str, argv: Sequence[str], log_path: Path, *, cwd: Path | None = None,
          env: dict[str, str] | None = None, drop_env: tuple[str, ...] = ()) -> DaemonRecord:
    """Start ``argv`` in its own session, output appended to ``log_path``; its environment
    is this one's with ``env`` added and ``drop_env`` removed."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    environment = {k: v for k, v in os.environ.items() if k not in drop_env} | (env or {})
    with log_path.open("ab") as sink:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True, env=environment,
        )
    _children[proc.pid] = proc
    stat = reaping.stat_of(proc.pid)
    record = DaemonRecord(name, tuple(argv), str(log_path), proc.pid, stat[1] if stat else 0)
    log.debug("started %s pid=%d: %s", name, proc.pid, " ".join(argv))
    return record


def alive(record: DaemonRecord) -> bool:
    """True while the recorded process runs (not a zombie, not a reused pid)."""
    if (child := _children.get(record.pid)) is not None and child.poll() is not None:
        _ended[record.pid] = _children.pop(record.pid)
        return False
    return reaping.ProcessId(record.pid, record.start_ticks).alive()


def exit_code(record: DaemonRecord, timeout_s: float = 10.0) -> int | None:
    """The exit code of a process this interpreter started and ``alive`` saw end; None if
    it is not ours or still runs after ``timeout_s``. Waits: a multi-threaded process shows
    as a zombie in /proc while its other threads die, before it can be reaped."""
    child = _children.get(record.pid) or _ended.get(record.pid)
    if child is None:
        return None
    try:
        return child.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


def send(record: DaemonRecord, sig: signal.Signals) -> bool:
    """Send ``sig`` if the process is alive; False if it was already gone."""
    if not alive(record):
        return False
    try:
        os.kill(record.pid, sig)
    except ProcessLookupError:
        return False
    return True


def stop(record: DaemonRecord, *, timeout_s: float = 10.0, sig: signal.Signals = signal.SIGTERM
         ) -> None:
    """Stop the process: ``sig``, then SIGKILL after ``timeout_s``; returns once it is gone."""
    if not send(record, sig):
        return
    try:
        waiting.wait_for(lambda: (not alive(record), record.pid), what=f"{record.name} to exit",
                         timeout_s=timeout_s, interval_s=0.05)
    except waiting.WaitTimeout:
        log.warning("%s (pid %d) ignored %s for %gs: SIGKILL", record.name, record.pid,
                    sig.name, timeout_s)
        send(record, signal.SIGKILL)
        waiting.wait_for(lambda: (not alive(record), record.pid),
                         what=f"{record.name} to die after SIGKILL", timeout_s=10, interval_s=0.05)


def stop_together(records: Sequence[DaemonRecord], *, timeout_s: float = 10.0,
                  sig: signal.Signals = signal.SIGTERM) -> None:
    """``stop`` each of ``records`` at once (signal all, then wait for each, SIGKILL after
    ``timeout_s``): processes that take a while to exit do so side by side."""
    threads = [threading.Thread(target=stop, args=(r,), kwargs={"timeout_s": timeout_s, "sig": sig})
               for r in records]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
