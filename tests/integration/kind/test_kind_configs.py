"""kind-configs/ and rendered configs pass kind's own loader and validator; invalid ones fail.

Runs the pinned ``kind`` binary (no docker daemon needed, nothing is created: see
``zoneproof.cluster.kind.check``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.cluster.kind import check
from zoneproof.cluster.kind import config as kind_config
from zoneproof.cluster.spec import ClusterSpec

REPO = Path(__file__).resolve().parents[3]
COMMITTED = sorted((REPO / "kind-configs").glob("*.yaml"))
INVALID = sorted((REPO / "tests" / "data" / "kind-configs").glob("invalid-*.yaml"))


def test_there_are_configs_to_check() -> None:
    assert {p.name for p in COMMITTED} >= {"multi-zone.yaml", "ha-control-plane.yaml"}
    assert len(INVALID) >= 5


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_config_is_accepted_by_kind(kind_binary: Path, path: Path) -> None:
    assert check.check_config(kind_binary, path) == []


@pytest.mark.parametrize("spec", [ClusterSpec(etcd_members=5, zones=("a", "b"), nodes_per_zone=3),
                                  ClusterSpec(etcd_members=1, zones=("zone-a",), nodes_per_zone=1)],
                         ids=["5-members-2-zones", "smallest"])
def test_rendered_config_with_audit_mounts_is_accepted(kind_binary: Path, tmp_path: Path,
                                                        spec: ClusterSpec) -> None:
    audit = kind_config.AuditMounts(policy_file=str(tmp_path / "p.yaml"), log_dir=str(tmp_path))
    path = tmp_path / "config.yaml"
    path.write_text(kind_config.to_yaml(kind_config.render(spec, cgroup_v1=True, audit=audit)))
    assert check.check_config(kind_binary, path) == []


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_config_is_rejected_with_the_reason(kind_binary: Path, path: Path) -> None:
    expected = path.read_text().splitlines()[0].removeprefix("# expect: ")
    problems = check.check_config(kind_binary, path)
    assert problems, f"kind accepted {path.name}"
    assert expected in "\n".join(problems)
