"""Beds zoneproof owns: names and paths proven safe, who made them, how they are doing.

A bed lives in ``<state root>/<backend>/<name>/``; ``bed_dir`` proves the name safe and the
directory directly inside the backend's root before anything touches it. A directory is
zoneproof's only if its state.json carries the ``Ownership`` record written when it was
made. While it is being made the creating run holds it (``claim``: a creator killed half-way
leaves it to its keeper); ``settle`` marks it complete and hands it over. ``judge`` says
whether a bed is healthy, starting, partial or leaked, and why.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import re
import sys
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from zoneproof import errors, runs
from zoneproof._util import daemons, reaping
from zoneproof.runs import state

__all__ = [
    "NAME_PATTERN",
    "BedView",
    "Health",
    "Ownership",
    "bed_dir",
    "check_name",
    "claim",
    "disturbed",
    "faulting_run",
    "judge",
    "keeping",
    "process_liveness",
    "settle",
    "unclaim",
    "view",
]

#: A bed's name, safe as a directory name: 1-40 lowercase letters, digits or '-'.
NAME_PATTERN = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")
STATE_KEY = "ownership"
_keep_beds = contextvars.ContextVar("zoneproof_keep_beds", default=False)


def check_name(name: str) -> str:
    """``name`` if it is a valid cluster name, else ConfigError naming the rule."""
    if not NAME_PATTERN.match(name or ""):
        raise errors.ConfigError(
            f"invalid cluster name {name!r}: a name is 1-40 lowercase letters, digits or '-', "
            "starting and ending with a letter or digit (no '/', '..' or empty names); pass "
            "--cluster-name with such a name (`zoneproof list` shows the beds there are)")
    return name


def bed_dir(root: Path, name: str) -> Path:
    """The directory of bed ``name`` under backend root ``root``, proven to lie directly in it."""
    check_name(name)
    path = root / name
    if path.is_symlink() or path.resolve().parent != root.resolve():
        raise errors.ConfigError(f"{path} is not a directory of its own in {root} (a symlink "
                                 "or a moved state root?): zoneproof touches nothing there")
    return path


@contextlib.contextmanager
def keeping() -> Iterator[None]:
    """Beds created in this block outlive the run creating them (until ``zoneproof down``)."""
    token = _keep_beds.set(True)
    try:
        yield
    finally:
        _keep_beds.reset(token)


@dataclass(frozen=True, slots=True)
class Ownership:
    """Who made a bed and who it lives with (state.json's ``ownership``)."""

    uid: str
    """A random id; the bed's processes carry it (``reaping.BED_ENV``), nothing else."""
    creator: reaping.ProcessId | None
    """The process that made it (pid + start time)."""
    command: str
    creator_run: str | None
    owner_run: str | None
    """The run the bed lives and dies with; None: kept until ``zoneproof down``."""
    complete: bool
    """Every creation step finished."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data = asdict(self)
        data["creator"] = self.creator.to_dict() if self.creator else None
        return data

    @classmethod
    def of_state(cls, data: dict[str, Any]) -> Ownership:
        """The record in a state file (one written before records existed: complete, kept,
        of an unknown creator)."""
        raw = data.get(STATE_KEY)
        if not isinstance(raw, dict):
            return cls("", None, "", None, None, True)
        creator = raw.get("creator")
        return cls(str(raw["uid"]), reaping.ProcessId.from_dict(creator) if creator else None,
                   str(raw.get("command", "")), raw.get("creator_run"), raw.get("owner_run"),
                   bool(raw.get("complete")))

    def owner_text(self) -> str:
        """Who owns the bed, and whether that one is alive."""
        if self.owner_run is not None:
            return f"run {self.owner_run}" + _run_text(self.owner_run)
        if not self.complete and self.creator is not None:
            alive = "alive" if self.creator.alive() else "dead"
            return f"being made by pid {self.creator.pid} ({alive}): {self.command}"
        return "kept until `zoneproof down`"


def _run_text(run_id: str) -> str:
    run = runs.Run(run_id, runs.directory(run_id))
    owner = run.owner() or {}
    pid = owner.get("process", {}).get("pid", "?")
    return f" ({owner.get('kind', 'ended')} pid {pid}, {'alive' if run.owner_alive() else 'dead'})"


def claim(backend: str, name: str) -> Ownership:
    """The record of a bed about to be made by this process; the current run holds it until
    ``settle`` (so a creator killed half-way leaves it to its keeper)."""
    run = runs.current()
    if run is not None:
        run.hold("bed", f"{backend}/{name}", backend=backend, name=name)
    run_id = run.id if run is not None else None
    return Ownership(uuid.uuid4().hex, reaping.ProcessId.me(), " ".join(sys.argv)[:300], run_id,
                     run_id, False)


def unclaim(backend: str, name: str) -> None:
    """The current run no longer holds bed ``name`` (removed, or kept for debugging)."""
    run = runs.current()
    if run is not None:
        run.release("bed", f"{backend}/{name}")


def settle(backend: str, name: str, made: Ownership) -> Ownership:
    """``made`` complete; kept past its run when created inside ``keeping`` (or outside any
    run), else owned by its run."""
    if _keep_beds.get() or runs.current() is None:
        unclaim(backend, name)
        return replace(made, complete=True, owner_run=None)
    return replace(made, complete=True)


def disturbed(backend: str, name: str, made: Ownership) -> None:
    """A fault of the current run stopped processes of this bed: a bed kept past its run
    is repaired when the run ends, however it ends (a bed of the run is deleted anyway)."""
    run = runs.current()
    if run is not None and made.owner_run is None:
        run.hold("repair", f"{backend}/{name}", backend=backend, name=name)


def faulting_run(backend: str, name: str) -> str | None:
    """The id of a live run (not this process's) whose faults disturb bed ``name`` now."""
    mine = runs.current()
    for run in runs.runs():
        if (mine is None or run.id != mine.id) and run.owner_alive() and any(
                h.get("kind") == "repair" and h.get("key") == f"{backend}/{name}"
                for h in run.holdings()):
            return run.id
    return None


class Health(enum.StrEnum):
    """What ``zoneproof list`` and ``status`` say of a bed."""

    HEALTHY = "healthy"
    STARTING = "starting"
    PARTIAL = "partial"
    LEAKED = "leaked"
    FOREIGN = "not zoneproof's"


def judge(made: Ownership, processes: dict[str, bool] | None) -> tuple[Health, str]:
    """The bed's health and why, from its record and its processes' liveness (None: a
    backend whose clusters have no host processes)."""
    if not made.complete:
        if made.creator is not None and made.creator.alive():
            return Health.STARTING, f"being made by pid {made.creator.pid}"
        return Health.LEAKED, ("its creation was interrupted (the creating process "
                               f"{made.creator.pid if made.creator else '?'} is gone)")
    if made.owner_run is not None:
        run = runs.Run(made.owner_run, runs.directory(made.owner_run))
        if not run.directory.is_dir() or not run.owner_alive():
            return Health.LEAKED, f"its run {made.owner_run} ended without removing it"
    if processes is None:
        return Health.HEALTHY, "complete"
    stopped = sorted(name for name, alive in processes.items() if not alive)
    if processes and len(stopped) == len(processes):
        return Health.LEAKED, "state without processes: none of them runs"
    if stopped:
        return Health.PARTIAL, f"not running: {', '.join(stopped)}"
    return Health.HEALTHY, f"all {len(processes)} processes running"


@dataclass(frozen=True, slots=True)
class BedView:
    """One bed as ``zoneproof list`` shows it."""

    backend: str
    name: str
    path: Path
    health: Health
    reason: str
    owner: str


def process_liveness(data: dict[str, Any]) -> dict[str, bool] | None:
    """Recorded process → alive, from a state file (None if it records no processes)."""
    recorded = data.get("processes")
    if not isinstance(recorded, dict):
        return None
    return {n: daemons.alive(daemons.DaemonRecord.from_dict(r)) for n, r in recorded.items()}


def view(backend: str, path: Path) -> BedView:
    """What a directory in a backend's root is."""
    if not NAME_PATTERN.match(path.name) or path.is_symlink() or not path.is_dir():
        return BedView(backend, path.name, path, Health.FOREIGN, "not a bed directory", "-")
    try:
        data = state.read_json(path / "state.json")
    except (OSError, ValueError):
        return BedView(backend, path.name, path, Health.FOREIGN,
                       "no state.json: zoneproof did not make it (or died making it)", "-")
    made = Ownership.of_state(data)
    health, reason = judge(made, process_liveness(data))
    return BedView(backend, path.name, path, health, reason, made.owner_text())
