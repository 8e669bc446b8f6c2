"""One cluster per test run, shared by every pytest-xdist worker.

The first worker that needs the cluster creates it (or adopts one already running under
that name) under a file lock and writes a marker file; the others read the marker. The
process that owns the run (xdist controller, or the lone pytest) calls ``release`` once,
after every worker has finished: it deletes the cluster only if this run created it. A
backend that adopts clusters (``Traits.makes_clusters`` False) is always asked: its
``delete`` removes only what the run installed there (the existing backend's node agent).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import filelock

from zoneproof import errors
from zoneproof.cluster import state
from zoneproof.cluster.interface import Backend, Cluster, Progress
from zoneproof.cluster.spec import ClusterSpec

__all__ = ["acquire", "acquire_resource", "forget_cluster", "release", "resources", "run_dir"]


def run_dir(run_id: str) -> Path:
    """The directory holding the lock and marker of test run ``run_id``."""
    return state.state_root() / "runs" / run_id


def acquire(backend: Backend, spec: ClusterSpec, run_id: str, progress: Progress) -> Cluster:
    """The run's cluster: created by the first caller, reused by the rest."""
    directory = run_dir(run_id)
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / "cluster.json"
    with filelock.FileLock(str(directory / "cluster.lock")):
        if marker.is_file():
            data = state.read_json(marker)
            found = backend.get(data["name"])
            if found is None:
                raise errors.BackendError(
                    f"cluster {data['name']!r} of this test run is gone (torn down by hand?)")
            return found
        created = not backend.traits.makes_clusters or backend.get(spec.name) is None
        found = backend.create(spec, progress=progress)
        state.write_json(marker, {"name": spec.name, "backend": backend.name, "created": created})
        return found


def acquire_resource(run_id: str, key: str, create: Callable[[], dict[str, Any]]
                     ) -> dict[str, Any]:
    """A run-wide resource (e.g. the webhook under test): made once, described by JSON.

    The first caller runs ``create`` under the run's lock and stores what it returns;
    later callers get the stored description. ``resources`` lists them for release.
    """
    directory = run_dir(run_id)
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / f"resource-{key}.json"
    with filelock.FileLock(str(directory / "cluster.lock")):
        if marker.is_file():
            return state.read_json(marker)
        data = create()
        state.write_json(marker, data)
        return data


def resources(run_id: str) -> dict[str, dict[str, Any]]:
    """Key → description of every run-wide resource made so far."""
    directory = run_dir(run_id)
    return {p.stem.removeprefix("resource-"): state.read_json(p)
            for p in sorted(directory.glob("resource-*.json"))}


def release(backend: Backend, run_id: str, *, keep: bool, progress: Progress) -> None:
    """Delete the run's cluster if the run created it (and ``keep`` is off); forget the run."""
    directory = run_dir(run_id)
    marker = directory / "cluster.json"
    if marker.is_file():
        data = state.read_json(marker)
        if data["created"] and not keep:
            backend.delete(data["name"], progress=progress)
        elif data["created"]:
            progress(f"cluster {data['name']!r} kept (--zp-keep-cluster): "
                     f"`zoneproof down --name {data['name']}` removes it")
    shutil.rmtree(directory, ignore_errors=True)


def forget_cluster(name: str) -> list[str]:
    """Drop the markers of runs that used cluster ``name`` (after a killed run); their ids."""
    runs = state.state_root() / "runs"
    forgotten = []
    for marker in sorted(runs.glob("*/cluster.json")) if runs.is_dir() else []:
        try:
            uses = state.read_json(marker).get("name") == name
        except (OSError, ValueError):
            uses = True  # unreadable: a torn run
        if uses:
            shutil.rmtree(marker.parent, ignore_errors=True)
            forgotten.append(marker.parent.name)
    return forgotten
