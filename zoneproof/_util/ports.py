"""Free loopback ports: a bind test, choosing a free block (or checking an explicit one),
and holding a port for a process's lifetime."""

from __future__ import annotations

import socket
from collections.abc import Callable, Collection
from pathlib import Path

import filelock

from zoneproof import errors

__all__ = ["SEARCH_START", "SEARCH_STOP", "choose_base", "is_free", "reserve"]

SEARCH_START = 21000
SEARCH_STOP = 32000

def is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if nothing listens on ``host``:``port`` (a bind test, as Go listeners bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def choose_base(
    count: int,
    *,
    explicit: int | None,
    reserved: Collection[int] = (),
    free: Callable[[int], bool] = is_free,
    start: int = SEARCH_START,
    stop: int = SEARCH_STOP,
) -> int:
    """The first port of a block of ``count`` free, unreserved ports.

    With ``explicit`` the block must start there, else ConfigError names the busy port and
    the fix. Without it, blocks from ``start`` to ``stop`` are tried in steps of ``count``.
    """
    if explicit is not None:
        block = range(explicit, explicit + count)
        taken = [p for p in block if p in reserved or not free(p)]
        if taken:
            raise errors.ConfigError(
                f"port {taken[0]} on 127.0.0.1 is in use (needed ports {block.start}-"
                f"{block.stop - 1}): stop what listens there (`ss -ltnp 'sport = :{taken[0]}'`),"
                " pass another --port-base, or omit it to pick a free block")
        return explicit
    for base in range(start, stop - count + 1, count):
        if all(p not in reserved and free(p) for p in range(base, base + count)):
            return base
    raise errors.ConfigError(
        f"no block of {count} free loopback ports between {start} and {stop}: free some "
        "ports or pass --port-base")


def reserve(lock_dir: Path, *, start: int, stop: int, host: str = "127.0.0.1"
            ) -> tuple[int, filelock.BaseFileLock]:
    """A free port and the held lock (``lock_dir/<port>.lock``) that keeps every other
    zoneproof process off it until released or until this process ends — also while
    nothing listens on it, e.g. between a server's stop and its restart on the same port
    (a bind test alone lets another process take it then). ConfigError if none is free."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    for port in range(start, stop):
        lock = filelock.FileLock(str(lock_dir / f"{port}.lock"))
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            continue
        if is_free(port, host):
            return port, lock
        lock.release()
    raise errors.ConfigError(f"no free port on {host} between {start} and {stop - 1}: free "
                             "some (`ss -ltn`)")
