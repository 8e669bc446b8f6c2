"""zoneproof's kind clusters never touch a user's; bad input fails fast with the fix.

A user's own kind cluster (made here with plain kind, on kind's own network) survives a
zoneproof cluster's whole life and ``down``; a user's cluster with a zoneproof-like name
is refused, not adopted or deleted; teardown leaves no container, network or state.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from zoneproof import errors
from zoneproof._util import processes
from zoneproof.cli import main
from zoneproof.cluster.kind import KindBackend, docker, tools
from zoneproof.cluster.kind import config as kind_config
from zoneproof.cluster.kind.backend import kind_create
from zoneproof.cluster.spec import ClusterSpec

SMALL = {"zones": ("zone-a",), "nodes_per_zone": 1, "etcd_members": 1}


def _progress(message: str) -> None:
    print(f"zoneproof: {message}")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private state root, so these tests see only their own clusters."""
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def docker_up() -> None:
    try:
        docker.ensure_daemon()
    except errors.BackendError as exc:
        pytest.skip(str(exc))


def test_docker_daemon_not_running_names_the_setup_script(
        state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{state}/no-such-docker.sock")
    with pytest.raises(errors.BackendError, match=r"scripts/setup-docker\.sh"):
        KindBackend().create(ClusterSpec(name="nodaemon", **SMALL), progress=_progress)
    assert not (state / "kind" / "nodaemon").exists()


def test_docker_missing_names_the_fix(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(state))
    with pytest.raises(errors.BackendError, match="docker is not installed"):
        KindBackend().create(ClusterSpec(name="nodocker", **SMALL), progress=_progress)


def test_missing_node_image_names_the_build_command_and_creates_nothing(
        state: Path, docker_up: None, kind_binary: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tools.IMAGE_ENV, "zoneproof/kind-node:does-not-exist")
    with pytest.raises(errors.ProvisionError, match=r"zoneproof build --node-image"):
        KindBackend().create(ClusterSpec(name="noimage", **SMALL), progress=_progress)
    assert not (state / "kind" / "noimage").exists()
    assert docker.containers(f"{docker.CLUSTER_LABEL}=zp-noimage") == {}


@pytest.fixture
def user_cluster(kind_ready: str, kind_binary: Path, tmp_path: Path) -> Iterator[str]:
    """A user's own one-node kind cluster ``zp-user<id>`` (on kind's default network)."""
    name = f"zp-user{uuid.uuid4().hex[:6]}"
    network_existed = bool(processes.run(["docker", "network", "ls", "-q", "--filter",
                                          "name=^kind$"]).strip())
    doc = kind_config.render(ClusterSpec(**SMALL), cgroup_v1=docker.cgroup_v1())
    doc["nodes"] = doc["nodes"][:1]
    config = tmp_path / "user.yaml"
    config.write_text(yaml.safe_dump(doc))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIND_EXPERIMENTAL")}
    argv = [str(kind_binary), "create", "cluster", "--name", name, "--config", str(config),
            "--image", kind_ready, "--kubeconfig", str(tmp_path / "user.kubeconfig")]
    delete = [str(kind_binary), "delete", "cluster", "--name", name, "--kubeconfig",
              str(tmp_path / "user.kubeconfig")]
    try:
        kind_create(argv, log_file=tmp_path / "kind-create.log", delete=delete, progress=print,
                    env=env)
        yield name
    finally:
        processes.run(delete, timeout_s=300)
        if not network_existed:
            docker.remove_network_if_unused("kind")


def test_user_cluster_is_never_adopted_deleted_or_disturbed(
        state: Path, user_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    backend = KindBackend()
    taken = kind_config.spec_name(user_cluster)
    assert taken is not None
    user_nodes = docker.containers(f"{docker.CLUSTER_LABEL}={user_cluster}")
    assert user_nodes and all(user_nodes.values())

    with pytest.raises(errors.ProvisionError, match="not zoneproof's"):
        backend.create(ClusterSpec(name=taken, **SMALL), progress=_progress)
    assert backend.delete(taken, progress=_progress) is False
    assert main.main(["down", "--backend", "kind", "--cluster-name", taken]) == 0
    assert "nothing to do" in capsys.readouterr().err

    ours = backend.create(ClusterSpec(name=f"own{uuid.uuid4().hex[:6]}", **SMALL),
                          progress=_progress)
    assert len(ours.containers()) == 2
    assert backend.names() == [ours.name]
    assert backend.delete(ours.name, progress=_progress) is True

    assert docker.containers(f"{docker.CLUSTER_LABEL}={ours.kind_name}") == {}
    assert not backend.paths(ours.name).root.exists()
    # zoneproof's network goes with its last cluster (another state root's may still use it)
    assert not docker.remove_network_if_unused()
    assert docker.containers(f"{docker.CLUSTER_LABEL}={user_cluster}") == user_nodes
