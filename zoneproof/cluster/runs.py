"""A run: one zoneproof process that makes things, its private directory, what it holds, and
the keeper that cleans up after it if it dies.

``zoneproof up``, ``qualify``, a pytest session (its xdist workers join it) and a chaos run
each open a run: ``<state root>/runs/<id>/`` (0700) with

- ``owner.json``: the owning process (pid + start time), its command, its keeper's pid;
- ``private/``: what must neither outlive the run nor be readable by others (component
  certificates and keys, kubeconfigs of component identities, flattened kubeconfigs);
- ``holdings/``: one JSON file per thing the run made outside itself that must be undone —
  a bed (``bed``), a cluster it created labelled objects in (``objects``), an object it
  cannot label (``object``), a bed whose processes it stopped (``repair``), nodes it
  cordoned (``uncordon``).

Processes need no holding: each inherits the run's token (``reaping.RUN_ENV``).

Closing a run (its owner's normal end, Ctrl-C, SIGTERM) reaps it: every process with its
token ends, every holding is undone newest first, the directory goes. If the owner dies
without closing (SIGKILL, OOM), its keeper — a small process started with the run in a
session of its own, waiting for the owner to end — reaps it at once; if the keeper died
too, the next zoneproof command that starts anything (up, qualify, down, a pytest session,
a chaos run) reaps every run whose owner is dead (``reap_dead``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import select
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock

from zoneproof._util import files, reaping
from zoneproof.cluster import state
from zoneproof.cluster.interface import Progress

__all__ = [
    "CREDENTIAL_LIFETIME_S",
    "Run",
    "Reaped",
    "RunView",
    "attach",
    "close",
    "current",
    "directory",
    "open_run",
    "private_dir",
    "reap",
    "reap_dead",
    "reaped",
    "runs",
]

log = logging.getLogger(__name__)

Reaper = Callable[[dict[str, Any], Progress], None]

#: How long a dead run's processes get after SIGTERM to clean up (pytest workers delete
#: their private beds), before SIGKILL.
GRACE_S = 60.0
#: Lifetime of the credentials a run issues (component identities, webhook serving
#: certificates): no run lasts this long, so none outlives its run by much.
CREDENTIAL_LIFETIME_S = 4 * 3600
#: A run directory without owner.json older than this is a torn run (its open was killed).
_TORN_AFTER_S = 60.0


def _root() -> Path:
    return state.state_root() / "runs"


def directory(run_id: str) -> Path:
    """``<state root>/runs/<run id>``."""
    return _root() / run_id


@dataclass(frozen=True, slots=True)
class Run:
    """One run's directory and what it holds."""

    id: str
    directory: Path

    @property
    def holdings_dir(self) -> Path:
        """One file per holding."""
        return self.directory / "holdings"

    def private(self, name: str = "") -> Path:
        """A directory under the run's private one (0700), removed when the run ends."""
        return files.private_dir(self.directory / "private" / name if name
                                 else self.directory / "private")

    def hold(self, kind: str, key: str, **data: Any) -> None:
        """Record that this run made ``kind`` ``key`` (once: a second hold is a no-op), to be
        undone when the run is reaped, newest first."""
        path = self.holdings_dir / f"{kind}-{_slug(key)}.json"
        if path.exists():
            return
        files.private_dir(self.holdings_dir)
        state.write_json(path, {"kind": kind, "key": key, "seq": time.time_ns(), **data})

    def release(self, kind: str, key: str) -> None:
        """Forget holding ``kind`` ``key`` (it was undone, or handed over)."""
        with contextlib.suppress(FileNotFoundError):
            (self.holdings_dir / f"{kind}-{_slug(key)}.json").unlink()

    def holdings(self) -> list[dict[str, Any]]:
        """Every holding, newest first."""
        found = []
        for path in self.holdings_dir.glob("*.json") if self.holdings_dir.is_dir() else []:
            with contextlib.suppress(OSError, ValueError):
                found.append(state.read_json(path))
        return sorted(found, key=lambda h: int(h.get("seq", 0)), reverse=True)

    def owner(self) -> dict[str, Any] | None:
        """owner.json (None while it is being written, or for a torn run)."""
        try:
            return state.read_json(self.directory / "owner.json")
        except (OSError, ValueError):
            return None

    def owner_alive(self) -> bool:
        """True while the owning process runs (a torn run counts as alive for a minute)."""
        owner = self.owner()
        if owner is None:
            try:
                age = time.time() - self.directory.stat().st_mtime
            except FileNotFoundError:
                return False
            return age < _TORN_AFTER_S
        return reaping.ProcessId.from_dict(owner["process"]).alive()


def _slug(key: str) -> str:
    readable = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)[:40]
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


class _Current:
    run: Run | None = None
    owned: bool = False


_current = _Current()


def current() -> Run | None:
    """The run this process belongs to (None outside any)."""
    return _current.run


def open_run(kind: str, *, run_id: str | None = None, keeper: bool = True) -> Run:
    """Open a run owned by this process (``kind``: up, qualify, pytest, chaos) and make it
    current; its processes inherit its token. ``keeper`` starts the keeper."""
    if _current.run is not None:
        raise RuntimeError(f"run {_current.run.id} is open in this process already")
    run_id = run_id or uuid.uuid4().hex[:12]
    run = Run(run_id, directory(run_id))
    files.private_dir(_root())
    run.directory.mkdir(mode=files.DIR_MODE)
    owner: dict[str, Any] = {"process": reaping.ProcessId.me().to_dict(), "kind": kind,
                             "command": " ".join(sys.argv)[:500], "started": time.time()}
    state.write_json(run.directory / "owner.json", owner)
    os.environ[reaping.RUN_ENV] = run_id
    _current.run, _current.owned = run, True
    if keeper:
        owner["keeper"] = _spawn_keeper(run).to_dict()
        state.write_json(run.directory / "owner.json", owner)
    return run


def private_dir(prefix: str) -> Path:
    """A fresh directory (0700) for one component's secrets: in the current run's private
    directory (removed with the run), or — outside any run — under the state root's
    ``private/`` (the caller removes it)."""
    run = current()
    base = run.private() if run is not None else files.private_dir(state.state_root() / "private")
    return files.private_dir(base / f"{prefix}-{uuid.uuid4().hex[:8]}")


def attach(run_id: str) -> Run:
    """Join run ``run_id`` opened by another process (an xdist worker joins its controller's):
    what this process makes is held by that run."""
    run = Run(run_id, directory(run_id))
    files.private_dir(run.directory)
    os.environ[reaping.RUN_ENV] = run_id
    _current.run, _current.owned = run, False
    return run


def close(progress: Progress) -> list[str]:
    """End this process's run: reap it if this process owns it, else just leave it; the
    problems met while reaping."""
    run, owned = _current.run, _current.owned
    _current.run, _current.owned = None, False
    os.environ.pop(reaping.RUN_ENV, None)
    if run is None or not owned:
        return []
    return reap(run, progress)


def _spawn_keeper(run: Run) -> reaping.ProcessId:
    env = {k: v for k, v in os.environ.items() if k != reaping.RUN_ENV}
    with (run.directory / "keeper.log").open("ab") as sink:
        keeper = subprocess.Popen(
            [sys.executable, "-m", "zoneproof.cluster.keeper", run.id], stdin=subprocess.DEVNULL,
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, env=env,
            close_fds=True)
    found = reaping.ProcessId.of(keeper.pid)
    return found or reaping.ProcessId(keeper.pid, 0)


# -- reaping ----------------------------------------------------------------------------

_REAPERS: dict[str, Reaper] = {}
#: Kinds of holdings undone before all others: they revert faults (a bed of the run deleted,
#: a kept bed repaired, nodes uncordoned). Sweeping objects can wait on pods that only a
#: reverted fault lets go (a namespace whose pods sit on a downed zone's nodes).
_FIRST: set[str] = set()
#: How long the record of a run reaped after its owner died stays for ``zoneproof list``.
REAPED_KEPT_S = 7 * 24 * 3600


def reaper(kind: str, *, reverts_faults: bool = False) -> Callable[[Reaper], Reaper]:
    """Register how a holding of ``kind`` is undone; ``reverts_faults``: before the others."""

    def register(function: Reaper) -> Reaper:
        _REAPERS[kind] = function
        if reverts_faults:
            _FIRST.add(kind)
        return function

    return register


def _undo_order(holdings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fault reverts first, each group newest first (``holdings`` is newest first)."""
    return sorted(holdings, key=lambda h: str(h.get("kind")) not in _FIRST)


def reap(run: Run, progress: Progress, *, grace_s: float = GRACE_S, why: str = "") -> list[str]:
    """End every process of ``run``, undo its holdings (fault reverts first, then newest
    first), remove its directory; the problems met (each step runs even if another failed).
    A no-op while another process reaps the same run. ``why``: the run's owner died without
    closing it (what ``zoneproof list`` then shows, with what was undone)."""
    problems: list[str] = []
    undone: list[str] = []
    lock = filelock.FileLock(str(run.directory / "reap.lock"))
    try:
        lock.acquire(timeout=0)
    except (filelock.Timeout, FileNotFoundError):
        return problems
    owner = run.owner() or {}
    try:
        ended = reaping.terminate(reaping.with_token(reaping.RUN_ENV, run.id), grace_s=grace_s)
        if ended:
            progress(f"run {run.id}: ended {len(ended)} process(es) it started: "
                     f"{', '.join(str(p.pid) for p in ended)}")
        for holding in _undo_order(run.holdings()):
            kind = str(holding.get("kind"))
            undo = _REAPERS.get(kind)
            try:
                if undo is None:
                    raise LookupError(f"no reaper for holdings of kind {kind!r}")
                undo(holding, progress)
                undone.append(f"{kind} {holding.get('key')}")
            except Exception as exc:  # every holding gets its turn; the problem is reported
                problems.append(f"run {run.id}: undoing {kind} {holding.get('key')}: "
                                f"{type(exc).__name__}: {exc}")
                log.error("%s", problems[-1])
    finally:
        lock.release()
        shutil.rmtree(run.directory, ignore_errors=True)
        if why:
            _record_reaped(run.id, owner, why, undone, problems)
    return problems


def _reaped_root() -> Path:
    return state.state_root() / "reaped"


def _record_reaped(run_id: str, owner: dict[str, Any], why: str, undone: list[str],
                   problems: list[str]) -> None:
    """Keep what ``zoneproof list`` says of a run reaped after its owner died."""
    with contextlib.suppress(OSError):
        files.private_dir(_reaped_root())
        state.write_json(_reaped_root() / f"{run_id}.json", {
            "id": run_id, "kind": owner.get("kind", "torn"),
            "pid": owner.get("process", {}).get("pid"), "why": why, "reaped": time.time(),
            "undone": undone, "problems": problems})


@dataclass(frozen=True, slots=True)
class Reaped:
    """A run reaped after its owner died (``zoneproof list``)."""

    id: str
    kind: str
    pid: int | None
    why: str
    reaped: float
    undone: tuple[str, ...]
    problems: tuple[str, ...]


def reaped() -> list[Reaped]:
    """Runs reaped after their owner died, newest first (records older than
    ``REAPED_KEPT_S`` are dropped)."""
    found = []
    for path in sorted(_reaped_root().glob("*.json")) if _reaped_root().is_dir() else []:
        try:
            data = state.read_json(path)
        except (OSError, ValueError):
            continue
        if time.time() - float(data.get("reaped", 0)) > REAPED_KEPT_S:
            path.unlink(missing_ok=True)
            continue
        found.append(Reaped(str(data["id"]), str(data.get("kind")), data.get("pid"),
                            str(data.get("why")), float(data.get("reaped", 0)),
                            tuple(data.get("undone", ())), tuple(data.get("problems", ()))))
    return sorted(found, key=lambda r: r.reaped, reverse=True)


def runs() -> list[Run]:
    """Every run directory under the state root."""
    root = _root()
    return [Run(p.name, p) for p in sorted(root.iterdir()) if p.is_dir()] if root.is_dir() else []


def reap_dead(progress: Progress) -> list[str]:
    """Reap every run whose owner is dead (its keeper died too); the problems met."""
    problems: list[str] = []
    for run in runs():
        if run is not _current.run and (_current.run is None or run.id != _current.run.id) \
                and not run.owner_alive():
            owner = run.owner() or {}
            progress(f"reaping run {run.id} ({owner.get('kind', 'torn')}, pid "
                     f"{owner.get('process', {}).get('pid', '?')}, dead)")
            problems += reap(run, progress, why="its owner died and its keeper too: reaped "
                             "by the next zoneproof command")
    return problems


@dataclass(frozen=True, slots=True)
class RunView:
    """A run as ``zoneproof list`` shows it."""

    id: str
    kind: str
    pid: int | None
    alive: bool
    holdings: tuple[str, ...]


def describe(run: Run) -> RunView:
    """What ``zoneproof list`` shows of ``run``."""
    owner = run.owner() or {}
    pid = owner.get("process", {}).get("pid")
    return RunView(run.id, str(owner.get("kind", "torn")), pid, run.owner_alive(),
                   tuple(f"{h.get('kind')} {h.get('key')}" for h in run.holdings()))


# -- the keeper -------------------------------------------------------------------------

def _wait_owner_gone(run: Run) -> bool:
    """Block until the owner ends (True) or the run is closed normally (False)."""
    owner = run.owner()
    if owner is None:
        return False  # owner.json is written before the keeper starts: the run is gone
    process = reaping.ProcessId.from_dict(owner["process"])
    handle = None
    with contextlib.suppress(OSError):  # no pidfd (old kernel): poll
        handle = os.pidfd_open(process.pid)
    try:
        while process.alive():
            if not run.directory.is_dir():
                return False
            if handle is not None:
                select.select([handle], [], [], 1.0)
            else:
                time.sleep(1.0)
    finally:
        if handle is not None:
            os.close(handle)
    return run.directory.is_dir()


def keep(run_id: str) -> int:
    """The keeper of run ``run_id``: wait for its owner to end; reap it if it was not closed."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s keeper: %(message)s")
    run = Run(run_id, directory(run_id))
    if not _wait_owner_gone(run):
        return 0

    def progress(message: str) -> None:
        log.info("%s", message)

    log.info("owner of run %s ended without closing it: reaping", run_id)
    started = time.monotonic()
    problems = reap(run, progress, why="its owner was killed (SIGKILL or crash): reaped by "
                    "its keeper")
    for problem in problems:
        log.error("%s", problem)
    log.info("run %s reaped in %.1f s", run_id, time.monotonic() - started)
    return 0
