"""Rendering kind configs from a ClusterSpec, names, and the argv run inside node containers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from zoneproof import cluster, errors
from zoneproof._util import nft
from zoneproof.cluster.kind import KindBackend, nodes
from zoneproof.cluster.kind import config as kind_config
from zoneproof.cluster.spec import ClusterSpec, Timings

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
REPO = Path(__file__).resolve().parents[3]


def _patch_ops(doc: dict[str, Any]) -> list[dict[str, Any]]:
    (patch,) = doc["kubeadmConfigPatchesJSON6902"]
    assert (patch["group"], patch["version"], patch["kind"]) == (
        "kubeadm.k8s.io", "v1beta4", "ClusterConfiguration")
    ops: list[dict[str, Any]] = yaml.safe_load(patch["patch"])
    return ops


def _args(doc: dict[str, Any], component: str) -> dict[str, str]:
    return {op["value"]["name"]: op["value"]["value"] for op in _patch_ops(doc)
            if op["path"] == f"/{component}/extraArgs/-"}


def _kubelet(doc: dict[str, Any]) -> dict[str, Any]:
    (patch,) = doc["kubeadmConfigPatches"]
    kubelet: dict[str, Any] = yaml.safe_load(patch)
    return kubelet


def test_default_spec_renders_one_control_plane_and_two_workers_per_zone() -> None:
    doc = kind_config.render(ClusterSpec(etcd_members=1), cgroup_v1=False)
    roles = Counter(n["role"] for n in doc["nodes"])
    assert roles == {"control-plane": 1, "worker": 6}
    workers = [n for n in doc["nodes"] if n["role"] == "worker"]
    assert Counter(n["labels"][ZONE] for n in workers) == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert {n["labels"][REGION] for n in workers} == {"region-1"}
    assert "labels" not in doc["nodes"][0]  # control plane: no zone, never in a zone outage
    assert (doc["kind"], doc["apiVersion"]) == ("Cluster", "kind.x-k8s.io/v1alpha4")


def test_etcd_members_become_control_plane_nodes() -> None:
    doc = kind_config.render(ClusterSpec(etcd_members=3, nodes_per_zone=1), cgroup_v1=False)
    assert [n["role"] for n in doc["nodes"]] == ["control-plane"] * 3 + ["worker"] * 3


def test_timings_become_kcm_apiserver_and_kubelet_settings() -> None:
    timings = Timings(node_monitor_period_s=0.5, node_monitor_grace_period_s=12,
                      toleration_s=45, node_lease_duration_s=6)
    doc = kind_config.render(ClusterSpec(timings=timings), cgroup_v1=False)
    assert _args(doc, "controllerManager") == {"node-monitor-period": "0.5s",
                                               "node-monitor-grace-period": "12s"}
    assert _args(doc, "apiServer") == {"default-not-ready-toleration-seconds": "45",
                                       "default-unreachable-toleration-seconds": "45"}
    assert _kubelet(doc)["nodeLeaseDurationSeconds"] == 6


def test_an_etcd_election_timeout_kind_cannot_apply_is_refused() -> None:
    with pytest.raises(errors.ConfigError, match="kubeadm's 1 s"):
        kind_config.render(ClusterSpec(timings=Timings(etcd_election_timeout_s=2.0)),
                           cgroup_v1=False)


def test_defaults_match_the_local_backend() -> None:
    doc = kind_config.render(ClusterSpec(), cgroup_v1=False)
    assert _args(doc, "controllerManager") == {"node-monitor-period": "1s",
                                               "node-monitor-grace-period": "8s"}


@pytest.mark.parametrize("cgroup_v1", [True, False])
def test_fail_cgroup_v1_is_set_only_on_cgroup_v1_hosts(cgroup_v1: bool) -> None:
    kubelet = _kubelet(kind_config.render(ClusterSpec(), cgroup_v1=cgroup_v1))
    assert kubelet["kind"] == "KubeletConfiguration"
    if cgroup_v1:
        assert kubelet["failCgroupV1"] is False
    else:
        assert "failCgroupV1" not in kubelet


def test_audit_log_is_mounted_on_a_single_control_plane() -> None:
    audit = kind_config.AuditMounts(policy_file="/state/audit-policy.yaml", log_dir="/state/audit")
    doc = kind_config.render(ClusterSpec(etcd_members=1), cgroup_v1=False, audit=audit)
    mounts = {m["containerPath"]: m["hostPath"] for m in doc["nodes"][0]["extraMounts"]}
    assert mounts == {"/etc/zoneproof/audit-policy.yaml": "/state/audit-policy.yaml",
                      "/var/log/zoneproof": "/state/audit"}
    assert _args(doc, "apiServer")["audit-log-path"] == "/var/log/zoneproof/audit.log"
    volumes = [op for op in _patch_ops(doc) if op["path"] == "/apiServer/extraVolumes"]
    assert {v["mountPath"] for v in volumes[0]["value"]} == set(mounts)


def test_no_audit_flags_without_mounts_or_with_several_control_planes() -> None:
    audit = kind_config.AuditMounts(policy_file="/p", log_dir="/d")
    for doc in (kind_config.render(ClusterSpec(etcd_members=1), cgroup_v1=False),
                kind_config.render(ClusterSpec(etcd_members=3), cgroup_v1=False, audit=audit)):
        assert "audit-log-path" not in _args(doc, "apiServer")
        assert all("extraMounts" not in n for n in doc["nodes"])


def test_yaml_round_trips_with_patches_as_block_text() -> None:
    doc = kind_config.render(ClusterSpec(), cgroup_v1=True, name="x")
    text = kind_config.to_yaml(doc, header="line one\nline two")
    assert text.startswith("# line one\n# line two\n")
    assert "patch: |" in text
    assert yaml.safe_load(text) == doc


def test_committed_kind_configs_are_current() -> None:
    """kind-configs/ is what `zoneproof kind-config --write kind-configs` writes."""
    expected = kind_config.committed_configs()
    assert sorted(p.name for p in (REPO / "kind-configs").glob("*.yaml")) == sorted(expected)
    for name, text in expected.items():
        assert (REPO / "kind-configs" / name).read_text() == text, (
            f"kind-configs/{name} is stale: run `zoneproof kind-config --write kind-configs`")


def test_cluster_names_are_prefixed_and_reversible() -> None:
    assert kind_config.cluster_name("zoneproof") == "zp-zoneproof"
    assert kind_config.spec_name("zp-zoneproof") == "zoneproof"
    assert kind_config.spec_name("kind") is None
    assert kind_config.spec_name("my-cluster") is None


def test_kubelet_and_static_pod_argv() -> None:
    assert nodes.kubelet_argv("stop") == ["systemctl", "stop", "kubelet"]
    park = nodes.park_static_pod_argv("etcd")
    assert park[:2] == ["sh", "-c"]
    assert "mv /etc/kubernetes/manifests/etcd.yaml /etc/kubernetes/zoneproof-parked/" in park[2]
    assert "tasks kill -s SIGKILL" in park[2]
    assert park[2].index("mv ") < park[2].index("tasks kill")  # kubelet must not restart it
    assert """'labels."io.kubernetes.container.name"==etcd'""" in park[2]
    unpark = nodes.unpark_static_pod_argv("kube-apiserver")
    assert "mv /etc/kubernetes/zoneproof-parked/kube-apiserver.yaml /etc/kubernetes/manifests/" \
        in unpark[2]
    assert nodes.parked_argv("kube-apiserver") == [
        "test", "-f", "/etc/kubernetes/zoneproof-parked/kube-apiserver.yaml"]


def test_registry_knows_kind_and_its_default_shape() -> None:
    assert "kind" in cluster.backend_names()
    assert isinstance(cluster.get_backend("kind"), KindBackend)
    assert cluster.backend_type("kind").traits.default_etcd_members == 1
    assert cluster.backend_type("local").traits.default_etcd_members == 3


def test_kind_backend_lists_and_deletes_only_its_state(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    backend = KindBackend()
    assert backend.names() == []
    assert backend.get("user-cluster") is None
    assert backend.delete("user-cluster", progress=print) is False


@pytest.mark.parametrize(("usage", "mib"), [("512.5MiB / 23.4GiB", 512.5), ("1.5GiB / 23GiB", 1536.0),
                                            ("2048KiB / 1GiB", 2.0)])
def test_docker_memory_figures_parse(usage: str, mib: float) -> None:
    from zoneproof.cluster.kind import docker

    assert docker.parse_mem_usage(usage) == pytest.approx(mib)


def test_the_kubelet_cut_is_one_nft_transaction_of_zoneproofs_own_table() -> None:
    """Made whole (an earlier table replaced), hooked on output (the node's own processes,
    after kube-proxy's DNAT) and input (a watch opened before the cut brings nothing more),
    dropping only the API servers' port; removed whole."""
    argv = nodes.cut_apiserver_argv(["172.18.0.2", "172.18.0.5"], ["fc00::2"])
    assert argv[0] == "nft" and len(argv) == 2
    commands = [c.strip() for c in argv[1].split("; ") if c.strip()]
    assert commands[:3] == ["add table inet zoneproof", "delete table inet zoneproof",
                            "add table inet zoneproof"]
    assert "type filter hook output priority -10" in argv[1]
    assert "ip daddr { 172.18.0.2, 172.18.0.5 } tcp dport 6443 drop" in argv[1]
    assert "ip6 daddr { fc00::2 } tcp dport 6443 drop" in argv[1]
    assert "type filter hook input priority -10" in argv[1]
    assert "input ip saddr { 172.18.0.2, 172.18.0.5 } tcp sport 6443 drop" in argv[1]
    assert "ip6" not in nodes.cut_apiserver_argv(["172.18.0.2"])[1]
    with pytest.raises(ValueError, match="no address"):
        nodes.cut_apiserver_argv([])
    assert nft.uncut_argv() == ["nft", "add table inet zoneproof; delete table inet zoneproof"]


def test_running_pods_are_read_from_the_runtime_by_pod_name() -> None:
    argv = nodes.running_pods_argv("zp-exp-1")
    assert argv[:2] == ["sh", "-c"] and "ctr -n k8s.io tasks ls" in argv[2]
    assert '$3 == "RUNNING"' in argv[2]  # stopped containers of a pod do not count
    assert argv[-1] == ('labels."io.kubernetes.pod.namespace"==zp-exp-1,'
                        'labels."io.cri-containerd.kind"==container')
    printed = ('"io.kubernetes.pod.name": "db-0"\n"io.kubernetes.pod.name": "db-0"\n'
               '"io.kubernetes.pod.name":"core-5f7-hz7bv"\n')
    assert nodes.pod_names(printed) == ["core-5f7-hz7bv", "db-0"]
    assert nodes.pod_names("") == []
