"""The kubelet cut on kind, wired to docker stand-ins: which nodes get which nft command."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof._util import nft
from zoneproof.cluster.kind import cluster as kind_cluster
from zoneproof.cluster.kind import docker, nodes
from zoneproof.cluster.kind.cluster import KindCluster, KindPaths
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import state

_ROLES = {"k-control-plane": "control-plane", "k-external-load-balancer": "external-load-balancer",
          "k-worker": "worker", "k-worker2": "worker", "k-worker3": "worker"}
_ADDRESSES = {"k-control-plane": ("172.18.0.2", ""), "k-external-load-balancer": ("172.18.0.9", ""),
              "k-worker": ("172.18.0.3", ""), "k-worker2": ("172.18.0.4", "")}


@pytest.fixture
def kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[KindCluster, list[tuple[str, list[str]]]]:
    """A KindCluster over a state file, its docker calls recorded; zone-a holds k-worker."""
    paths = KindPaths(tmp_path)
    state.write_json(paths.state, {"spec": ClusterSpec(name="k").to_dict(), "image": "i",
                                   "kind_name": "k"})
    calls: list[tuple[str, list[str]]] = []
    tables: set[str] = set()

    def exec_in(container: str, argv: list[str], **_: object) -> str:
        calls.append((container, list(argv)))
        if argv == nft.uncut_argv():
            tables.discard(container)
        elif argv[0] == "nft":
            tables.add(container)
        return "table inet zoneproof {}" if argv == nodes.cut_argv() and container in tables else ""

    def containers(*labels: str) -> dict[str, bool]:
        role = next((lab.split("=", 1)[1] for lab in labels if lab.startswith(kind_cluster.ROLE_LABEL)),
                    None)
        return {n: True for n, r in _ROLES.items() if role is None or r == role}

    monkeypatch.setattr(docker, "exec_in", exec_in)
    monkeypatch.setattr(docker, "containers", containers)
    monkeypatch.setattr(docker, "addresses", lambda name, network=docker.NETWORK: _ADDRESSES[name])
    monkeypatch.setattr(KindCluster, "zone_nodes", lambda self, zone: {"zone-a": ["k-worker"]}[zone])
    return KindCluster(paths), calls


def test_the_cut_reaches_the_zones_nodes_only_and_names_every_api_server_address(
        kind: tuple[KindCluster, list[tuple[str, list[str]]]]) -> None:
    cluster, calls = kind
    cluster.cut_kubelet_links("zone-a")
    assert calls == [("k-worker", nodes.cut_apiserver_argv(["172.18.0.2", "172.18.0.9"]))]
    assert cluster.cut_nodes() == ["k-worker"]
    cluster.restore_kubelet_links("zone-a")
    assert calls[-1] == ("k-worker", nft.uncut_argv())
    assert cluster.cut_nodes() == []


def test_repair_removes_every_cut_left_in_force(
        kind: tuple[KindCluster, list[tuple[str, list[str]]]]) -> None:
    """What the run's keeper calls when the run died with a cut in force."""
    cluster, calls = kind
    cluster.cut_kubelet_links("zone-a")
    said: list[str] = []
    assert cluster.repair(said.append) == ["k-worker"]
    assert cluster.cut_nodes() == [] and "k-worker" in said[0]
    assert cluster.repair(said.append) == []  # nothing left: nothing done
    assert not any(c == "k-external-load-balancer" for c, _ in calls)  # no nft in the balancer
