"""The chaostoolkit-kubernetes wrappers fix its known defects (no cluster needed)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from chaosk8s import create_k8s_api_client
from chaosk8s.node import actions as node_actions
from chaoslib.exceptions import ActivityFailed
from kubernetes.config import kube_config

from zoneproof import runs
from zoneproof._util import reaping
from zoneproof.chaos import k8s


@pytest.fixture(autouse=True)
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[runs.Run]:
    """A run of each test's own (apart from this session's): what it holds is its alone."""
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.setattr(runs, "_current", runs._Current())
    monkeypatch.setenv(reaping.RUN_ENV, "")
    opened = runs.open_run("test", keeper=False)
    yield opened
    monkeypatch.setattr(runs, "_current", runs._Current())  # its holdings touch no cluster


def _kubeconfig(path: Path, name: str, server: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": name, "user": {"token": f"token-{name}"}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}]}))
    return path


@pytest.fixture
def two_files(tmp_path: Path) -> str:
    first = _kubeconfig(tmp_path / "a.yaml", "first", "https://first.example:6443")
    second = _kubeconfig(tmp_path / "b.yaml", "second", "https://second.example:6443")
    return f"{first}{os.pathsep}{second}"


def test_chaosk8s_alone_falls_back_to_localhost_with_two_files(
        two_files: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", two_files)
    assert create_k8s_api_client().configuration.host == "http://localhost"  # the defect


def test_flattened_kubeconfig_reaches_chaosk8s(two_files: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", two_files)
    flat = k8s.flatten_kubeconfig(two_files, tmp_path / "flat")
    merged = yaml.safe_load(flat.read_text())
    assert merged["current-context"] == "first"  # kubectl's rule: the first file wins
    assert {c["name"] for c in merged["clusters"]} == {"first", "second"}
    before = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    with k8s.using_kubeconfig(flat):
        assert create_k8s_api_client().configuration.host == "https://first.example:6443"
    assert os.environ["KUBECONFIG"] == two_files
    assert before == kube_config.KUBE_CONFIG_DEFAULT_LOCATION


def test_single_file_is_used_as_is(tmp_path: Path) -> None:
    one = _kubeconfig(tmp_path / "a.yaml", "a", "https://a.example")
    assert k8s.flatten_kubeconfig(str(one), tmp_path) == one


@pytest.mark.parametrize("refusal", [
    "Failed to evict pod db-1: Cannot evict pod as it would violate the pod's disruption budget.",
    'Failed to evict pod db-2: (403) {"reason":"Forbidden","details":{"causes":[{"reason":'
    '"NamespaceTerminating","message":"namespace zp-chaos-1 is being terminated"}]}}',
], ids=["pdb", "namespace-terminating"])
def test_drain_retries_evictions_kubectl_would_wait_for(
        refusal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[Exception | list[str]] = [ActivityFailed(refusal), ["zone-a-node-1"]]
    calls: list[str] = []

    def drain(**kwargs: object) -> list[str]:
        calls.append(os.environ["KUBECONFIG"])
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(node_actions, "drain_nodes", drain)
    config = _kubeconfig(tmp_path / "c.yaml", "c", "https://c.example")
    assert k8s.NodeScheduling(config).drain("zone=a", timeout_s=10) == ["zone-a-node-1"]
    assert calls == [str(config), str(config)]


def test_drain_other_failures_are_not_retried(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def drain(**kwargs: object) -> list[str]:
        raise ActivityFailed("Pod 'x' on node 'n' is unmanaged, cannot drain this node")

    monkeypatch.setattr(node_actions, "drain_nodes", drain)
    with pytest.raises(ActivityFailed, match="unmanaged"):
        k8s.NodeScheduling(_kubeconfig(tmp_path / "c.yaml", "c", "https://c")).drain(
            "x=y", timeout_s=5)


def test_a_run_uncordons_what_it_drained_however_it_ends(run: runs.Run, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Held before the first node is touched, so a killed run's keeper still uncordons."""
    def drain(**kwargs: object) -> list[str]:
        assert [h["selector"] for h in run.holdings() if h["kind"] == "uncordon"] == ["zone=a"]
        return ["zone-a-node-1"]

    monkeypatch.setattr(node_actions, "drain_nodes", drain)
    config = _kubeconfig(tmp_path / "c.yaml", "c", "https://c.example")
    assert k8s.NodeScheduling(config).drain("zone=a", timeout_s=10) == ["zone-a-node-1"]
