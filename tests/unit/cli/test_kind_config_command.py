"""``zoneproof kind-config`` and the kind defaults of ``zoneproof up``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from zoneproof import cluster
from zoneproof.cli import main
from zoneproof.cluster.kind import config as kind_config


def test_prints_a_config_for_the_requested_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["kind-config", "--etcd-members", "3", "--zones", "a,b",
                      "--nodes-per-zone", "1", "--cgroup-v1"]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert [n["role"] for n in doc["nodes"]] == ["control-plane"] * 3 + ["worker"] * 2
    assert "failCgroupV1: false" in doc["kubeadmConfigPatches"][0]


def test_write_produces_the_committed_files(tmp_path: Path) -> None:
    assert main.main(["kind-config", "--write", str(tmp_path)]) == 0
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == kind_config.committed_configs()


def test_invalid_shape_is_an_error_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["kind-config", "--etcd-members", "2"]) == 4
    assert "etcd_members must be 1, 3 or 5" in capsys.readouterr().err


@pytest.mark.parametrize(("backend", "members"), [("kind", 1), ("local", 3)])
def test_up_defaults_etcd_members_per_backend(backend: str, members: int) -> None:
    args = main._parser().parse_args(["up", "--backend", backend])
    assert main._spec(args, cluster.get_backend(backend)).etcd_members == members
