"""What actually ran: the description of a component under test as the harness started it.

Every start (a webhook served or registered, a controller replica started) is described
by a ``Started`` — the component, the command template and the argv started, the
resolved executable and its SHA-256, its log file, the URL, the registration as the API
server stored it — and noted in this process's ledger. Reports are built from the ledger
(``since``), never from settings, so they name only what ran.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zoneproof import errors
from zoneproof.binaries import sha256_of
from zoneproof.components.harness.component import Component

__all__ = ["Started", "executable_of", "mark", "note", "of_command", "since"]


@dataclass(frozen=True, slots=True)
class Started:
    """One start of a component under test, as it happened."""

    component: Component
    argv: tuple[str, ...] = ()
    executable: str = ""
    """The resolved path of ``argv[0]`` (symlinks followed)."""
    sha256: str = ""
    """SHA-256 of ``executable``."""
    url: str = ""
    """The webhook's URL (served by the suite or external)."""
    registration: Mapping[str, Any] | None = None
    """The MutatingWebhookConfiguration registered for it, as the API server stored it."""
    log: str = ""
    """The file the process's output goes to ('' when the suite started no process)."""
    in_cluster: Mapping[str, Any] | None = None
    """An in-cluster component as deployed (``in_cluster.Installed.describe``): manifests,
    image archive and its SHA-256, the image ids it holds and each pod runs."""

    def with_registration(self, url: str, stored: Mapping[str, Any]) -> Started:
        """This start, registered at ``url`` with ``stored``."""
        return replace(self, url=url, registration=stored)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (inverse of ``from_dict``); keys that do not apply are left out."""
        out: dict[str, Any] = {"component": self.component.to_dict()}
        if self.argv:
            out |= {"command": self.component.template, "argv": list(self.argv),
                    "executable": self.executable, "sha256": self.sha256}
        if self.url:
            out["url"] = self.url
        if self.registration is not None:
            out["registration"] = dict(self.registration)
        if self.log:
            out["log"] = self.log
        if self.in_cluster is not None:
            out["mode"] = self.in_cluster.get("mode", "in-cluster")
            out["in_cluster"] = {k: v for k, v in self.in_cluster.items()
                                 if k not in _NOT_REPORTED}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Started:
        """Inverse of ``to_dict``."""
        return cls(Component.from_dict(data["component"]), tuple(data.get("argv", ())),
                   str(data.get("executable", "")), str(data.get("sha256", "")),
                   str(data.get("url", "")), data.get("registration"), str(data.get("log", "")),
                   data.get("in_cluster"))


#: Keys of an in-cluster description that only undo it (not what ran).
_NOT_REPORTED = ("mode", "kubeconfig", "objects", "created_namespaces")


@functools.lru_cache(maxsize=64)
def _digest(path: Path, size: int, mtime_ns: int) -> str:
    return sha256_of(path)


def executable_of(argv: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(resolved path, SHA-256) of the program ``argv`` starts, looked up on PATH like exec."""
    if not argv:
        raise errors.ConfigError("the command is empty: give a command template")
    path_var = (env or {}).get("PATH", os.environ.get("PATH", ""))
    found = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=path_var)
    resolved = Path(found).resolve() if found else None
    if resolved is None or not resolved.is_file():
        raise errors.ConfigError(f"cannot run {argv[0]!r}: not an executable file nor on PATH "
                                 f"({path_var}); fix the command template")
    stat = resolved.stat()
    return str(resolved), _digest(resolved, stat.st_size, stat.st_mtime_ns)


def of_command(component: Component, argv: Sequence[str],
               env: Mapping[str, str] | None = None, *, log: Path | None = None) -> Started:
    """The description of starting ``argv`` for ``component`` (executable resolved, digested),
    its output going to ``log``."""
    executable, digest = executable_of(argv, env)
    return Started(component, tuple(argv), executable, digest, log=str(log) if log else "")


_ledger: list[Started] = []
_lock = threading.Lock()


def note(started: Started) -> Started:
    """Record a start in this process's ledger; ``started``."""
    with _lock:
        _ledger.append(started)
    return started


def mark() -> int:
    """A position in the ledger: ``since(mark())`` are the starts after now."""
    with _lock:
        return len(_ledger)


def since(position: int) -> list[Started]:
    """The starts noted after ``position`` (a ``mark``)."""
    with _lock:
        return list(_ledger[position:])
