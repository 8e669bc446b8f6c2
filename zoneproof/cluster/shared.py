"""One cluster per test run, shared by every pytest-xdist worker.

The first worker that needs the cluster creates it (or adopts one already running under
that name) under a file lock and writes a marker file in the run's directory
(``runs.directory``); the others read the marker. The process that owns the run (xdist
controller, or the lone pytest) calls ``release`` once, after every worker has finished:
it deletes the cluster only if this run created it. A cluster the run acquires is held by
the run (its labelled objects are removed when the run ends) and named in its reports
(``identity``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import filelock

from zoneproof import errors
from zoneproof.cluster import identity, ownership, runs, state, sweep
from zoneproof.cluster.interface import Backend, Cluster, Progress
from zoneproof.cluster.spec import ClusterSpec

__all__ = ["acquire", "acquire_resource", "forget_cluster", "release", "resources", "run_dir"]


def run_dir(run_id: str) -> Path:
    """The directory holding the lock and marker of test run ``run_id`` (the run's own)."""
    return runs.directory(run_id)


def acquire(backend: Backend, spec: ClusterSpec, run_id: str, progress: Progress, *,
            keep: bool = False) -> Cluster:
    """The run's cluster: created by the first caller (kept after the run with ``keep``),
    reused by the rest."""
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
        created = backend.get(spec.name) is None
        with ownership.keeping() if keep else contextlib.nullcontext():
            found = backend.create(spec, progress=progress)
        state.write_json(marker, {"name": spec.name, "backend": backend.name, "created": created})
        sweep.track(found.kubeconfig)
        identity.record(identity.identify(found))
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
    """Delete the run's cluster if the run created it (and ``keep`` is off); drop the
    markers (the run's directory goes when the run ends)."""
    directory = run_dir(run_id)
    marker = directory / "cluster.json"
    if marker.is_file():
        data = state.read_json(marker)
        if data["created"] and not keep:
            backend.delete(data["name"], progress=progress)
        elif data["created"]:
            progress(f"cluster {data['name']!r} kept (--zp-keep-cluster): "
                     f"`zoneproof down --name {data['name']}` removes it")
    for path in [marker, *directory.glob("resource-*.json")]:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def forget_cluster(name: str) -> list[str]:
    """Drop the cluster markers of runs that used cluster ``name`` (it was removed by
    hand); their ids. The runs themselves are left to their owners (or keepers)."""
    forgotten = []
    for run in runs.runs():
        marker = run.directory / "cluster.json"
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
