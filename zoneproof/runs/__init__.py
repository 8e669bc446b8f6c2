"""Runs: what one zoneproof process makes, and how it is all undone however the process ends.

``up``, ``qualify``, a pytest session (its xdist workers join it) and ``chaos run`` each open
a run: ``<state root>/runs/<id>/`` with ``owner.json`` (the owning process, its keeper),
``private/`` (secrets that go with the run) and ``holdings/`` (one file per thing made
outside the run: a bed, labelled objects, cordoned nodes...). Every process it starts
carries its token (``reaping.RUN_ENV``). Closing a run reaps it: its processes end, each
holding is undone newest first by the reaper of its kind (entry-point group
``zoneproof.reapers``), the directory goes. If the owner dies unclosed, its ``keeper``
reaps it; if the keeper died too, the next command that starts anything does
(``reap_dead``).

Modules: ``state`` (the state root), ``ownership`` (beds zoneproof owns), ``sweep`` (what a
run makes in a cluster), ``identity`` (which clusters a run tested), ``keeper``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import filelock

from zoneproof._util import files, reaping
from zoneproof._util.progress import Progress
from zoneproof.runs import state

__all__ = [
    "CLUSTER_MARKER",
    "CREDENTIAL_LIFETIME_S",
    "REAPED_KEPT_S",
    "REAPERS",
    "REVERTS_FAULTS",
    "Reaped",
    "Reaper",
    "Run",
    "RunView",
    "attach",
    "close",
    "current",
    "hold_cluster",
    "describe",
    "directory",
    "forget_cluster",
    "open_run",
    "private_dir",
    "reap",
    "reap_dead",
    "reaped",
    "release_cluster",
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
#: The entry-point group naming the reaper of each holding kind (``kind = "module:function"``).
REAPERS = "zoneproof.reapers"
#: Kinds of holdings undone before all others: they revert faults (a bed of the run deleted,
#: a kept bed repaired, nodes uncordoned, CoreDNS given back). Sweeping objects can wait on
#: pods that only a reverted fault lets go (a namespace whose pods sit on a downed zone's
#: nodes).
REVERTS_FAULTS = frozenset({"bed", "repair", "uncordon", "cluster-dns"})
#: How long the record of a run reaped after its owner died stays for ``zoneproof list``.
REAPED_KEPT_S = 7 * 24 * 3600
#: The file in a run's directory naming the cluster its processes share (the pytest plugin's).
CLUSTER_MARKER = "cluster.json"


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


def hold_cluster(kind: str, kubeconfig: Path) -> None:
    """The current run (if any) holds ``kind`` on the cluster of ``kubeconfig`` (the key,
    and the holding's ``kubeconfig``: its resolved path)."""
    run = current()
    if run is not None:
        path = str(kubeconfig.resolve())
        run.hold(kind, path, kubeconfig=path)


def release_cluster(kind: str, kubeconfig: Path) -> None:
    """The current run (if any) no longer holds ``kind`` on the cluster of ``kubeconfig``."""
    run = current()
    if run is not None:
        run.release(kind, str(kubeconfig.resolve()))


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
            [sys.executable, "-m", "zoneproof.runs.keeper", run.id], stdin=subprocess.DEVNULL,
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, env=env,
            close_fds=True)
    found = reaping.ProcessId.of(keeper.pid)
    return found or reaping.ProcessId(keeper.pid, 0)


# -- reaping ----------------------------------------------------------------------------

_REAPERS: dict[str, Reaper] = {}


@functools.cache
def _declared() -> dict[str, metadata.EntryPoint]:
    return {entry.name: entry for entry in metadata.entry_points(group=REAPERS)}


def _reaper(kind: str) -> Reaper:
    """How a holding of ``kind`` is undone: the function declared for it in ``REAPERS``."""
    if kind not in _REAPERS:
        entry = _declared().get(kind)
        if entry is None:
            raise LookupError(f"no reaper for holdings of kind {kind!r} (entry-point group "
                              f"{REAPERS}: reinstall zoneproof, `make setup`)")
        _REAPERS[kind] = entry.load()
    return _REAPERS[kind]


def _undo_order(holdings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fault reverts first, each group newest first (``holdings`` is newest first)."""
    return sorted(holdings, key=lambda h: str(h.get("kind")) not in REVERTS_FAULTS)


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
            try:
                _reaper(kind)(holding, progress)
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


def forget_cluster(name: str) -> list[str]:
    """Drop the cluster markers of runs that used cluster ``name`` (it was removed by
    hand); their ids. The runs themselves are left to their owners (or keepers)."""
    forgotten = []
    for run in runs():
        marker = run.directory / CLUSTER_MARKER
        try:
            uses = state.read_json(marker).get("name") == name
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            uses = True  # unreadable: a torn marker
        if uses:
            with contextlib.suppress(FileNotFoundError):
                marker.unlink()
            forgotten.append(run.id)
    return forgotten
