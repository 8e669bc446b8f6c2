"""Worker processes: the webhook served by several processes on one port, one per core.

Python runs one thread at a time (the GIL), so a second event-loop thread in the same
process mostly waits for it; a second process serves on the other core. ``fork`` reserves
the port (a bound, not listening, socket with ``SO_REUSEPORT``, so a port of 0 is chosen
once for all), then forks the other workers before any thread starts. Each worker then
listens on that port itself with ``SO_REUSEPORT``: the kernel spreads connections over the
workers that listen. A worker dies with the first process (``PR_SET_PDEATHSIG`` SIGKILL: a
killed webhook never leaves a worker answering); the first process forwards SIGTERM/SIGINT
to the workers (``signal_workers``) and reaps them (``reap``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import time
from dataclasses import dataclass

__all__ = ["Workers", "fork", "per_worker"]

_PR_SET_PDEATHSIG = 1
_REAP_S = 10.0


@dataclass(frozen=True, slots=True)
class Workers:
    """This process's place among the workers: ``index`` 0 is the first (the parent)."""

    index: int
    port: int
    reserved: socket.socket
    ready_pipe: tuple[int, int]
    children: tuple[int, ...] = ()

    def listening(self) -> None:
        """Say that this worker listens (a forked one), and let the port go."""
        self.release()
        if self.index:
            os.write(self.ready_pipe[1], b".")
        for fd in self.ready_pipe:
            os.close(fd)

    def wait_listening(self, timeout_s: float) -> bool:
        """(The first process) whether every other worker said it listens within ``timeout_s``."""
        deadline, heard = time.monotonic() + timeout_s, 0
        os.set_blocking(self.ready_pipe[0], False)
        while heard < len(self.children) and time.monotonic() < deadline:
            try:
                heard += len(os.read(self.ready_pipe[0], len(self.children)))
            except BlockingIOError:
                time.sleep(0.01)  # polling a pipe our own children write to, bounded
        return heard >= len(self.children)

    def release(self) -> None:
        """Let the port go (once this worker listens on it, or gives up)."""
        self.reserved.close()

    def signal_workers(self, signum: int) -> None:
        """Pass ``signum`` on to the other workers (the first process only)."""
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def reap(self) -> None:
        """Wait for the other workers to end (``_REAP_S`` at most, then SIGKILL)."""
        deadline = time.monotonic() + _REAP_S
        pending = set(self.children)
        while pending:
            for pid in list(pending):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    pending.discard(pid)
            if pending and time.monotonic() >= deadline:
                self.signal_workers(signal.SIGKILL)
                deadline = float("inf")
            if pending:
                time.sleep(0.05)  # polling our own children's exit, bounded by the deadline


def per_worker(total: int, count: int) -> int:
    """Each worker's share of a limit of ``total`` (rounded up, at least 1)."""
    return max(1, -(-total // count))


def fork(bind: str, port: int, count: int) -> Workers:
    """``count`` processes (this one and ``count - 1`` forked) that will serve ``bind:port``;
    in each, which one it is and the port (chosen here when ``port`` is 0). Call it before
    any thread starts. OSError if the port cannot be bound."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    reserved = socket.socket(family, socket.SOCK_STREAM)
    try:
        reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        reserved.bind((bind, port))
    except OSError:
        reserved.close()
        raise
    port = int(reserved.getsockname()[1])
    parent, children, pipe = os.getpid(), [], os.pipe()
    for index in range(1, count):
        pid = os.fork()
        if pid == 0:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return Workers(index, port, reserved, pipe)
        children.append(pid)
    return Workers(0, port, reserved, pipe, tuple(children))
