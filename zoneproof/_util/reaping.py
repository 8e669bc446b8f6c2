"""Processes by owner, not by name: exact ownership tokens, signals that end a run cleanly.

Every process a zoneproof run starts inherits ``ZONEPROOF_RUN=<run id>`` from it; a test
bed's processes carry ``ZONEPROOF_BED=<bed uid>`` instead (they belong to their bed, which
may outlive the run). Both ids are random; ``with_token`` compares them for equality in
``/proc/<pid>/environ`` — never a substring or a prefix of a command line — so finding
what a dead run or a deleted bed left cannot hit anything else. A process is named by
``ProcessId`` (pid + kernel start time), so a reused pid is never taken for it.

``interrupt_on_terminate`` makes SIGTERM and SIGHUP take Ctrl-C's path (KeyboardInterrupt:
every ``finally`` and teardown runs) and remembers which signal came
(``interrupted_by``); ``run_child`` runs a child command whose interruption
is passed on to it, so the child cleans up too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "BED_ENV",
    "RUN_ENV",
    "ProcessId",
    "interrupt_on_terminate",
    "interrupted_by",
    "run_child",
    "stat_of",
    "terminate",
    "with_token",
]

log = logging.getLogger(__name__)

RUN_ENV = "ZONEPROOF_RUN"
BED_ENV = "ZONEPROOF_BED"
_GONE_STATES = ("Z", "X")


@dataclass(frozen=True, slots=True)
class ProcessId:
    """A process as the kernel knows it: pid and start time (clock ticks since boot)."""

    pid: int
    start_ticks: int

    @classmethod
    def of(cls, pid: int) -> ProcessId | None:
        """The process ``pid`` now (None if there is none, or only a zombie)."""
        stat = stat_of(pid)
        if stat is None or stat[0] in _GONE_STATES:
            return None
        return cls(pid, stat[1])

    @classmethod
    def me(cls) -> ProcessId:
        """This process."""
        found = cls.of(os.getpid())
        assert found is not None
        return found

    def alive(self) -> bool:
        """True while this very process runs (not a zombie, not a reused pid)."""
        stat = stat_of(self.pid)
        return stat is not None and stat[0] not in _GONE_STATES and stat[1] == self.start_ticks

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProcessId:
        """Inverse of to_dict."""
        return cls(int(data["pid"]), int(data["start_ticks"]))


def stat_of(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of ``pid``, or None if gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return fields[0], int(fields[19])


def _environ(pid: int) -> dict[bytes, bytes]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or not ours to read
        return {}
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {key: value for key, _, value in pairs}


def with_token(key: str, value: str) -> list[ProcessId]:
    """Live processes (not this one) whose environment has exactly ``key=value``."""
    if not value:
        raise ValueError(f"an empty {key} matches nothing safely")
    wanted = (key.encode(), value.encode())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if _environ(int(entry.name)).get(wanted[0]) == wanted[1]:
            process = ProcessId.of(int(entry.name))
            if process is not None:
                found.append(process)
    return found


def _signal(process: ProcessId, sig: signal.Signals) -> None:
    if process.alive():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, sig)


def terminate(processes: Iterable[ProcessId], *, grace_s: float = 10.0) -> list[ProcessId]:
    """SIGTERM each process, SIGKILL those still alive after ``grace_s``; those that were
    alive. A process is signalled only while its start time still matches."""
    targets = [p for p in processes if p.alive()]
    for process in targets:
        _signal(process, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(p.alive() for p in targets) and time.monotonic() < deadline:
        time.sleep(0.05)
    for process in targets:
        if process.alive():
            log.warning("pid %d ignored SIGTERM for %gs: SIGKILL", process.pid, grace_s)
            _signal(process, signal.SIGKILL)
    deadline = time.monotonic() + 10.0
    while any(p.alive() for p in targets) and time.monotonic() < deadline:
        time.sleep(0.05)
    return targets


class _Received:
    signal: signal.Signals | None = None


_received = _Received()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    if _received.signal is not None:
        # the interruption is under way (a group signal, then the parent passing it on): a
        # second KeyboardInterrupt would break off its cleanup, and print a traceback
        log.info("signal %s while the interruption by %s is handled: noted",
                 signal.Signals(signum).name, _received.signal.name)
        return
    _received.signal = signal.Signals(signum)  # the first one says why the run ended
    raise KeyboardInterrupt(f"signal {_received.signal.name}")


def interrupted_by() -> signal.Signals | None:
    """The first signal that interrupted this process (SIGINT, SIGTERM or SIGHUP, once
    ``interrupt_on_terminate`` handles them), None if none did."""
    return _received.signal


def interrupt_on_terminate() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread, as Ctrl-C
    does, and are remembered (``interrupted_by``); only the first: the cleanup it starts is
    not broken off by another (SIGKILL still ends the process, and its keeper cleans up).
    A no-op off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_interrupt)


@contextlib.contextmanager
def _ignoring(*signals: signal.Signals) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_child(argv: Sequence[str], *, cwd: Path | None = None, grace_s: float = 300.0) -> int:
    """Run ``argv`` to completion; its exit code.

    If this process is interrupted (Ctrl-C, SIGTERM), the child gets SIGTERM and up to
    ``grace_s`` to clean up (further signals here are ignored meanwhile), then SIGKILL;
    the interruption is raised again afterwards.
    """
    child = subprocess.Popen(list(argv), cwd=cwd)
    try:
        return child.wait()
    except KeyboardInterrupt:
        with _ignoring(signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                log.warning("%s did not end %gs after SIGTERM: SIGKILL", argv[0], grace_s)
                child.kill()
                child.wait()
        raise
