"""kind cluster configs from a ClusterSpec: zones as node labels, timings as kubeadm patches.

Pure functions, no I/O: the backend renders the config of each cluster from its spec (and
the host's cgroup version); ``kind-configs/`` in the repository holds the same renderings
for plain ``kind create cluster --config``. The kubeadm API is ``v1beta4`` (what kind
renders for Kubernetes >= 1.36): its ``extraArgs`` are lists, so the flags are appended with
JSON 6902 patches, keeping the ones kind sets itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from zoneproof import errors
from zoneproof.cluster._common import REGION_LABEL, ZONE_LABEL
from zoneproof.cluster.spec import ClusterSpec, Timings

__all__ = [
    "AUDIT_LOG_DIR",
    "NAME_PREFIX",
    "AuditMounts",
    "cluster_name",
    "committed_configs",
    "render",
    "spec_name",
    "to_yaml",
]

#: Every kind cluster zoneproof makes is called ``zp-<spec name>``: a user's never is.
NAME_PREFIX = "zp-"
API_VERSION = "kind.x-k8s.io/v1alpha4"
KUBEADM_VERSION = "v1beta4"
#: Where the control-plane node keeps the API server's audit policy and log.
AUDIT_POLICY_PATH = PurePosixPath("/etc/zoneproof/audit-policy.yaml")
AUDIT_LOG_DIR = PurePosixPath("/var/log/zoneproof")
#: The election timeout kubeadm's stacked etcd runs with (etcd's default; not patched).
KUBEADM_ETCD_ELECTION_TIMEOUT_S = 1.0


def cluster_name(spec_name: str) -> str:
    """The kind cluster (and container name prefix) of spec ``spec_name``."""
    return NAME_PREFIX + spec_name


def spec_name(kind_name: str) -> str | None:
    """Inverse of ``cluster_name``; None for a kind cluster zoneproof does not name."""
    return kind_name.removeprefix(NAME_PREFIX) if kind_name.startswith(NAME_PREFIX) else None


@dataclass(frozen=True, slots=True)
class AuditMounts:
    """Host paths bound into the control-plane node for the API server's audit log."""

    policy_file: str
    log_dir: str


def _append_arg(component: str, name: str, value: str) -> dict[str, Any]:
    """A JSON 6902 op appending flag ``--name=value`` to a component's extraArgs list."""
    return {"op": "add", "path": f"/{component}/extraArgs/-",
            "value": {"name": name, "value": value}}


def _cluster_patch(timings: Timings, audit: bool) -> str:
    def seconds(value: float) -> str:
        return f"{value:g}s"

    ops = [
        _append_arg("controllerManager", "node-monitor-period",
                    seconds(timings.node_monitor_period_s)),
        _append_arg("controllerManager", "node-monitor-grace-period",
                    seconds(timings.node_monitor_grace_period_s)),
    ]
    apiserver_args = [("default-not-ready-toleration-seconds", str(timings.toleration_s)),
                      ("default-unreachable-toleration-seconds", str(timings.toleration_s))]
    if audit:
        apiserver_args += [("audit-policy-file", str(AUDIT_POLICY_PATH)),
                           ("audit-log-path", str(AUDIT_LOG_DIR / "audit.log"))]
    ops += [_append_arg("apiServer", name, value) for name, value in apiserver_args]
    if audit:
        ops.append({"op": "add", "path": "/apiServer/extraVolumes", "value": [
            {"name": "zoneproof-audit-policy", "hostPath": str(AUDIT_POLICY_PATH),
             "mountPath": str(AUDIT_POLICY_PATH), "readOnly": True, "pathType": "File"},
            {"name": "zoneproof-audit-log", "hostPath": str(AUDIT_LOG_DIR),
             "mountPath": str(AUDIT_LOG_DIR), "pathType": "DirectoryOrCreate"}]})
    return yaml.safe_dump(ops, sort_keys=False)


def _kubelet_patch(timings: Timings, cgroup_v1: bool) -> str:
    patch: dict[str, Any] = {"kind": "KubeletConfiguration",
                             "nodeLeaseDurationSeconds": timings.node_lease_duration_s}
    if cgroup_v1:
        # Kubernetes >= 1.35 refuses to start on cgroup v1 unless told otherwise.
        patch["failCgroupV1"] = False
    return yaml.safe_dump(patch, sort_keys=False)


def _control_plane(index: int, audit: AuditMounts | None, spec: ClusterSpec) -> dict[str, Any]:
    node: dict[str, Any] = {"role": "control-plane"}
    if spec.etcd_members > 1:  # an HA control plane: its nodes spread over the zones in turn
        node["labels"] = {ZONE_LABEL: spec.zones[index % len(spec.zones)],
                          REGION_LABEL: spec.region}
    if audit is not None and index == 0:
        node["extraMounts"] = [
            {"hostPath": audit.policy_file, "containerPath": str(AUDIT_POLICY_PATH),
             "readOnly": True},
            {"hostPath": audit.log_dir, "containerPath": str(AUDIT_LOG_DIR)}]
    return node


def render(spec: ClusterSpec, *, cgroup_v1: bool, audit: AuditMounts | None = None,
           name: str | None = None) -> dict[str, Any]:
    """The kind config of ``spec``: ``etcd_members`` control-plane nodes (stacked etcd),
    ``nodes_per_zone`` workers in each zone, labelled with zone and region; an HA control
    plane's nodes are labelled with the zones in turn (seed 003: an etcd member and a
    control-plane replica per zone).

    ``audit`` adds the audit log on the first control-plane node (host paths, so not in
    the committed configs); ``name`` sets the config's cluster name (``--name`` wins).
    """
    if spec.timings.etcd_election_timeout_s != KUBEADM_ETCD_ELECTION_TIMEOUT_S:
        raise errors.ConfigError(
            f"timings.etcd_election_timeout_s {spec.timings.etcd_election_timeout_s:g}: kind's "
            f"etcd runs kubeadm's {KUBEADM_ETCD_ELECTION_TIMEOUT_S:g} s; keep the default or "
            "use the local backend")
    workers = [{"role": "worker", "labels": {ZONE_LABEL: zone, REGION_LABEL: spec.region}}
               for zone in spec.zones for _ in range(spec.nodes_per_zone)]
    doc: dict[str, Any] = {"kind": "Cluster", "apiVersion": API_VERSION}
    if name is not None:
        doc["name"] = name
    # Audit flags only where the files are mounted: a single control plane.
    with_audit = audit is not None and spec.etcd_members == 1
    doc["nodes"] = [_control_plane(i, audit if with_audit else None, spec)
                    for i in range(spec.etcd_members)] + workers
    doc["kubeadmConfigPatches"] = [_kubelet_patch(spec.timings, cgroup_v1)]
    doc["kubeadmConfigPatchesJSON6902"] = [{
        "group": "kubeadm.k8s.io", "version": KUBEADM_VERSION, "kind": "ClusterConfiguration",
        "patch": _cluster_patch(spec.timings, with_audit)}]
    return doc


def to_yaml(doc: dict[str, Any], *, header: str = "") -> str:
    """YAML text of a rendered config (block strings for the patches), with a comment header."""

    class _Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    _Dumper.add_representer(str, text)
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + yaml.dump(doc, Dumper=_Dumper, sort_keys=False)


_COMMITTED = {"multi-zone": ("zoneproof-multi-zone", 1), "ha-control-plane": ("zoneproof-ha", 3)}
_HEADER = """{what}; 3 zones x 2 workers labelled with zone and region{cp_zones};
test-friendly node-lifecycle timings (as the local backend's).
Generated by `zoneproof kind-config --write kind-configs` (do not edit by hand).
Use: kind create cluster --config kind-configs/{file} --image <node image>
{cgroup}"""


def committed_configs() -> dict[str, str]:
    """File name → text of each config in ``kind-configs/`` (with a cgroup v1 twin each)."""
    files = {}
    for stem, (name, members) in _COMMITTED.items():
        what = ("1 control plane" if members == 1
                else f"{members} control-plane nodes (stacked etcd, {members} members)")
        for cgroup_v1, suffix in ((False, ""), (True, "-cgroup-v1")):
            file = f"{stem}{suffix}.yaml"
            cgroup = ("For hosts on cgroup v1 (`stat -fc %T /sys/fs/cgroup` says tmpfs):\n"
                      "the kubelet is told failCgroupV1: false." if cgroup_v1 else
                      f"On a cgroup v1 host use {stem}-cgroup-v1.yaml\n"
                      "(Kubernetes >= 1.35 refuses cgroup v1 otherwise).")
            doc = render(ClusterSpec(etcd_members=members), cgroup_v1=cgroup_v1, name=name)
            cp_zones = "" if members == 1 else ",\nthe control-plane nodes with a zone each"
            files[file] = to_yaml(doc, header=_HEADER.format(what=what, file=file, cgroup=cgroup,
                                                             cp_zones=cp_zones))
    return files
