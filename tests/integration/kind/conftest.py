"""Real kind clusters on this machine: marked ``kind``, skipped with the fix when not possible.

Every module here runs in the xdist group ``kind`` (one worker, one module after the
other), so at most one zoneproof kind cluster is up at a time; each is deleted by its
fixture, also when a test fails or the run is interrupted.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.cluster.kind import KindBackend, KindCluster, docker, tools
from zoneproof.cluster.spec import ClusterSpec


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark everything here ``kind`` and keep it on one xdist worker."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.kind)
            item.add_marker(pytest.mark.xdist_group("kind"))


@pytest.fixture(scope="session")
def kind_binary() -> Path:
    """The pinned kind binary (built from its Go module if missing)."""
    try:
        return tools.kind_binary(progress=lambda _: None)
    except errors.BinaryError as exc:
        pytest.skip(f"kind binary unavailable: {exc}")


@pytest.fixture(scope="session")
def kind_ready(kind_binary: Path) -> str:
    """The node image, once docker and the image are known to be there (else skip)."""
    try:
        docker.ensure_daemon()
    except errors.BackendError as exc:
        pytest.skip(f"docker is not usable here ({exc}); `scripts/setup-docker.sh` sets it up")
    image = tools.node_image()
    if not docker.image_exists(image):
        pytest.skip(f"kind node image {image} is not built: `zoneproof build --node-image`")
    return image


def _progress(message: str) -> None:
    print(f"zoneproof: {message}")


@pytest.fixture(scope="module")
def make_kind_cluster(kind_ready: str) -> Iterator[Callable[..., KindCluster]]:
    """Factory of kind clusters (ClusterSpec fields), all deleted after the module."""
    backend = KindBackend()
    made: list[str] = []

    def make(**fields: object) -> KindCluster:
        spec = ClusterSpec(name=f"it-{uuid.uuid4().hex[:6]}", **fields)  # type: ignore[arg-type]
        made.append(spec.name)
        return backend.create(spec, progress=_progress)

    try:
        yield make
    finally:
        for name in made:
            backend.delete(name, progress=_progress)
