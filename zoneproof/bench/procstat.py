"""CPU time and memory of processes, read from /proc (Linux): the benches' cost figures."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["children", "cpu_by_name", "cpu_seconds", "cpu_used_by_group", "group_of", "peak_rss_mib",
           "rss_mib", "tree_cpu_seconds"]

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def tree_cpu_seconds(pid: int) -> float:
    """``cpu_seconds`` of ``pid`` and of its live children (e.g. forked worker processes)."""
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in children(pid))


def _status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` now, MiB (0.0 if unknown)."""
    return _status_mib(pid, "VmRSS")


def peak_rss_mib(pid: int) -> float:
    """The most resident memory ``pid`` has had so far (its high-water mark), MiB."""
    return _status_mib(pid, "VmHWM")


def group_of(name: str) -> str:
    """A bed process's group: ``etcd-1`` → ``etcd``, ``kwok-zone-a`` → ``kwok``."""
    return re.sub(r"-.*$", "", name) if name.startswith(("etcd-", "kwok-")) else name


def cpu_by_name(pids: Mapping[str, int]) -> dict[str, float]:
    """CPU seconds used so far by each named process still running."""
    found: dict[str, float] = {}
    for name, pid in pids.items():
        try:
            found[name] = cpu_seconds(pid)
        except OSError:
            continue  # gone (e.g. a kwok the fault stopped)
    return found


def cpu_used_by_group(before: Mapping[str, float], after: Mapping[str, float]
                      ) -> dict[str, float]:
    """CPU seconds used between two ``cpu_by_name`` readings, summed per ``group_of``;
    a process gone by ``after`` counts with nothing (its last seconds are unknown)."""
    used: dict[str, float] = {}
    for name, seconds in after.items():
        group = group_of(name)
        used[group] = used.get(group, 0.0) + seconds - before.get(name, seconds)
    return used
