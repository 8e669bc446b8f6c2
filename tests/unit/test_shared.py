"""One cluster per run: created once, adopted when already up, released only if created."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from zoneproof_fixtures import shared

from zoneproof import runs
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import identity


@dataclass(frozen=True)
class FakeCluster:
    name: str
    backend: str = "fake"
    kubeconfig: Path = Path("/nonexistent/kubeconfig")


class FakeBackend:
    """Records calls; a 'cluster' is just its name."""

    name = "fake"

    def __init__(self, existing: set[str] | None = None) -> None:
        self.clusters = set(existing or ())
        self.created: list[str] = []
        self.deleted: list[str] = []

    def create(self, spec: ClusterSpec, *, progress: Any, keep_on_failure: bool = False
               ) -> FakeCluster:
        if spec.name not in self.clusters:
            self.clusters.add(spec.name)
            self.created.append(spec.name)
        return FakeCluster(spec.name)

    def get(self, name: str) -> FakeCluster | None:
        return FakeCluster(name) if name in self.clusters else None

    def delete(self, name: str, *, progress: Any) -> bool:
        self.deleted.append(name)
        self.clusters.discard(name)
        return True


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    monkeypatch.setattr(runs, "_current", runs._Current())  # apart from this session's run
    monkeypatch.setattr(identity, "identify", lambda cluster, role="under test": (
        identity.ClusterIdentity(cluster.name, cluster.backend, "https://x", "uid", "v1", role)))


def _noop(_: str) -> None:
    pass


def test_first_caller_creates_later_callers_reuse_owner_deletes() -> None:
    backend = FakeBackend()
    spec = ClusterSpec(name="bed")
    for _ in range(3):  # three workers
        assert shared.acquire(backend, spec, "run1", _noop).name == "bed"  # type: ignore[arg-type]
    assert backend.created == ["bed"]
    shared.release(backend, "run1", keep=False, progress=_noop)  # type: ignore[arg-type]
    assert backend.deleted == ["bed"]
    assert not (shared.run_dir("run1") / "cluster.json").exists()


def test_adopted_cluster_is_left_running() -> None:
    backend = FakeBackend(existing={"bed"})
    shared.acquire(backend, ClusterSpec(name="bed"), "run2", _noop)  # type: ignore[arg-type]
    shared.release(backend, "run2", keep=False, progress=_noop)  # type: ignore[arg-type]
    assert backend.deleted == []


def test_keep_leaves_the_created_cluster() -> None:
    backend = FakeBackend()
    messages: list[str] = []
    shared.acquire(backend, ClusterSpec(name="bed"), "run3", _noop)  # type: ignore[arg-type]
    shared.release(backend, "run3", keep=True, progress=messages.append)  # type: ignore[arg-type]
    assert backend.deleted == [] and "zoneproof down --cluster-name bed" in messages[0]


def test_run_resources_are_made_once() -> None:
    calls: list[int] = []

    def make() -> dict[str, Any]:
        calls.append(1)
        return {"url": "https://127.0.0.1:1"}

    first = shared.acquire_resource("run4", "webhook", make)
    second = shared.acquire_resource("run4", "webhook", make)
    assert first == second and len(calls) == 1
    assert shared.resources("run4") == {"webhook": {"url": "https://127.0.0.1:1"}}


def test_forget_cluster_drops_markers_of_killed_runs() -> None:
    backend = FakeBackend()
    shared.acquire(backend, ClusterSpec(name="bed"), "killed", _noop)  # type: ignore[arg-type]
    shared.acquire(backend, ClusterSpec(name="other"), "alive", _noop)  # type: ignore[arg-type]
    assert runs.forget_cluster("bed") == ["killed"]
    assert not (shared.run_dir("killed") / "cluster.json").exists()
    assert (shared.run_dir("alive") / "cluster.json").exists()
