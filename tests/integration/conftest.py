"""Integration tests of the test bed itself: real processes, no mocks.

``host`` gives a test a state root of its own (under the run's) and tells what zoneproof
left there: every process carrying that state root in its environment (bed processes,
components, keepers, pytest workers — all inherit it), run directories, beds, busy ports.
A host records its owner (the test process); one whose owner was killed before its teardown
is swept by the next host made (``sweep_orphans``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import filelock
import pytest

from zoneproof._util import reaping, waiting
from zoneproof._util.ports import is_free
from zoneproof.runs import state

CLI = [sys.executable, "-m", "zoneproof.cli.main"]
STATE_ENV = "ZONEPROOF_STATE"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything here runs against real clusters."""
    for item in items:
        if "tests/integration" in str(item.path):
            item.add_marker(pytest.mark.cluster)


#: Runs a command with SIGINT at its default (coreutils env execs it: same pid).
_INTERRUPTIBLE = ("env", "--default-signal=INT")


@dataclass
class Host:
    """One test's state root, and what zoneproof left under it."""

    state: Path
    ports: set[int] = field(default_factory=set)

    @property
    def tmp(self) -> Path:
        """The temp directory of everything the test starts (``TMPDIR``): what is left there
        is a leak like a left process (pytest's own retained ``pytest-of-*`` excepted)."""
        return self.state.parent / "tmp"

    def env(self, **extra: str) -> dict[str, str]:
        """This environment with the test's state root and temp directory (and not this
        session's run)."""
        base = {k: v for k, v in os.environ.items() if k != reaping.RUN_ENV}
        return {**base, STATE_ENV: str(self.state), "TMPDIR": str(self.tmp), **extra}

    def cli(self, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
        """``zoneproof ARGS`` to completion."""
        return subprocess.run([*CLI, *args], capture_output=True, text=True, env=self.env(),
                              timeout=timeout_s, check=False)

    def start(self, argv: list[str], log: str, cwd: Path | None = None, *,
              own_group: bool = False) -> subprocess.Popen[bytes]:
        """Start ``argv`` with the test's state root, output to ``<state>/../<log>``;
        ``own_group``: in a process group of its own (to be signalled as a group). SIGINT
        acts as it does on a command typed in a shell, also when these tests run in the
        background (``nohup make test &``), whose children would inherit it ignored."""
        sink = (self.state.parent / log).open("wb")
        return subprocess.Popen([*_INTERRUPTIBLE, *argv], env=self.env(), stdout=sink,
                                stderr=subprocess.STDOUT, cwd=cwd, start_new_session=own_group)

    def log(self, name: str) -> str:
        """A log written by ``start``."""
        path = self.state.parent / name
        return path.read_text(errors="replace") if path.is_file() else ""

    def processes(self) -> list[reaping.ProcessId]:
        """Live processes started under this state root."""
        return reaping.with_token(STATE_ENV, str(self.state))

    def beds(self, backend: str = "local") -> list[str]:
        """Bed directories of ``backend``."""
        root = self.state / backend
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def remember_ports(self, name: str) -> None:
        """Note bed ``name``'s ports (they must be free when it is gone)."""
        data = state.read_json(self.state / "local" / name / "state.json")
        self.ports |= {p for key, v in data["ports"].items()
                       for p in (v if isinstance(v, list) else [v])}

    def leftovers(self, *, keep_beds: tuple[str, ...] = ()) -> dict[str, list[str]]:
        """What is still there: processes (of beds not kept), runs, beds, busy ports, files
        in run directories (certificates, kubeconfigs...), temp files."""
        runs = self.state / "runs"
        kept_uids = {str(state.read_json(self.state / "local" / n / "state.json")
                         ["ownership"]["uid"]) for n in keep_beds}
        kept = {p for uid in kept_uids for p in reaping.with_token(reaping.BED_ENV, uid)}
        found = {
            "processes": [str(p.pid) for p in self.processes() if p not in kept],
            "runs": sorted(p.name for p in runs.iterdir()) if runs.is_dir() else [],
            "beds": [b for b in self.beds() if b not in keep_beds],
            "ports": [str(p) for p in sorted(self.ports) if not is_free(p)] if not keep_beds
            else [],
            "files": [str(p) for p in runs.rglob("*") if p.is_file()] if runs.is_dir() else [],
            "temp": sorted(str(p) for p in self.tmp.iterdir()
                           if not p.name.startswith("pytest-of-")) if self.tmp.is_dir() else [],
        }
        return {k: v for k, v in found.items() if v}

    def wait_clean(self, *, timeout_s: float = 180, keep_beds: tuple[str, ...] = ()
                   ) -> dict[str, list[str]]:
        """Wait until nothing is left (keepers finish their work); what is left then."""
        with contextlib.suppress(waiting.WaitTimeout):
            waiting.wait_for(lambda: (not (left := self.leftovers(keep_beds=keep_beds)), left),
                             what="nothing left behind", timeout_s=timeout_s, interval_s=1.0)
        return self.leftovers(keep_beds=keep_beds)


#: Beside a host's ``state``: the test process that made it (a host outlives it only when
#: that process was killed: the next host made sweeps it away).
_OWNER = "owner.json"
#: A host without an owner file (being made, or made by a zoneproof before owners, whose
#: session may still use it) is left alone this long.
_OWNERLESS_KEPT_S = 6 * 3600.0


def _remove(root: Path) -> None:
    """Bring down a host's beds, end its processes, remove it."""
    found = Host(root / "state")
    for bed in found.beds():
        found.cli("down", "--cluster-name", bed)
    reaping.terminate(found.processes(), grace_s=5)
    shutil.rmtree(root, ignore_errors=True)


def sweep_orphans(parent: Path) -> list[str]:
    """Remove the hosts under ``parent`` whose owner is gone (a test session killed before
    its fixtures' teardown: no keeper watches a host); the ones removed."""
    removed = []
    for root in sorted(p for p in parent.glob("*") if p.is_dir()) if parent.is_dir() else []:
        owner = root / _OWNER
        try:
            if reaping.ProcessId.from_dict(json.loads(owner.read_text())).alive():
                continue
        except FileNotFoundError:
            if time.time() - root.stat().st_mtime < _OWNERLESS_KEPT_S:
                continue
        except (OSError, ValueError, KeyError):
            pass  # unreadable: as dead as a missing owner
        try:
            with filelock.FileLock(parent / f".{root.name}.lock", timeout=0):
                if root.is_dir():  # another session's sweep may have removed it meanwhile
                    _remove(root)
                    removed.append(root.name)
        except filelock.Timeout:
            continue  # another session sweeps it
        (parent / f".{root.name}.lock").unlink(missing_ok=True)
    return removed


@contextlib.contextmanager
def _own_host() -> Iterator[Host]:
    parent = state.state_root() / "t"
    sweep_orphans(parent)
    root = parent / uuid.uuid4().hex[:8]
    (root / "state").mkdir(parents=True)
    (root / "tmp").mkdir()
    (root / _OWNER).write_text(json.dumps(reaping.ProcessId.me().to_dict()))
    try:
        yield Host(root / "state")
    finally:
        _remove(root)


@pytest.fixture
def host() -> Iterator[Host]:
    """A state root of the test's own; whatever it leaves is removed afterwards."""
    with _own_host() as found:
        yield found


@pytest.fixture(scope="module")
def module_host() -> Iterator[Host]:
    """``host`` for a whole module (a bed its tests share)."""
    with _own_host() as found:
        yield found
