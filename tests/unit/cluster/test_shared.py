"""One cluster per run: created once, adopted when already up, released only if created."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zoneproof.cluster import shared
from zoneproof.cluster.interface import Traits
from zoneproof.cluster.spec import ClusterSpec


class FakeBackend:
    """Records calls; a 'cluster' is just its name."""

    name = "fake"
    traits = Traits(summary="fake", makes_clusters=True)

    def __init__(self, existing: set[str] | None = None) -> None:
        self.clusters = set(existing or ())
        self.created: list[str] = []
        self.deleted: list[str] = []

    def create(self, spec: ClusterSpec, *, progress: Any, keep_on_failure: bool = False) -> str:
        if spec.name not in self.clusters:
            self.clusters.add(spec.name)
            self.created.append(spec.name)
        return spec.name

    def get(self, name: str) -> str | None:
        return name if name in self.clusters else None

    def delete(self, name: str, *, progress: Any) -> bool:
        self.deleted.append(name)
        self.clusters.discard(name)
        return True


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))


def _noop(_: str) -> None:
    pass


def test_first_caller_creates_later_callers_reuse_owner_deletes() -> None:
    backend = FakeBackend()
    spec = ClusterSpec(name="bed")
    for _ in range(3):  # three workers
        assert shared.acquire(backend, spec, "run1", _noop) == "bed"  # type: ignore[arg-type]
    assert backend.created == ["bed"]
    shared.release(backend, "run1", keep=False, progress=_noop)  # type: ignore[arg-type]
    assert backend.deleted == ["bed"]
    assert not shared.run_dir("run1").exists()


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
    assert backend.deleted == [] and "zoneproof down --name bed" in messages[0]


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
    assert shared.forget_cluster("bed") == ["killed"]
    assert not shared.run_dir("killed").exists() and shared.run_dir("alive").exists()


class AdoptingBackend(FakeBackend):
    """A backend of users' clusters: its delete removes only what a run installed."""

    traits = Traits(summary="adopts", makes_clusters=False)


def test_a_backend_that_adopts_clusters_is_always_asked_to_clean_up() -> None:
    backend = AdoptingBackend(existing={"theirs"})
    assert shared.acquire(backend, ClusterSpec(name="theirs"), "run3", _noop) == "theirs"  # type: ignore[arg-type]
    shared.release(backend, "run3", keep=False, progress=_noop)  # type: ignore[arg-type]
    assert backend.deleted == ["theirs"]
