"""Command lines and kubeconfigs of the local bed's processes. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from zoneproof.cluster.local.options import KwokPer
from zoneproof.cluster.local.ports import Ports
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.specs import kubernetes

__all__ = [
    "SERVICE_CIDR",
    "BedPaths",
    "apiserver_argv",
    "controller_manager_argv",
    "etcd_argv",
    "etcd_member_names",
    "etcd_url",
    "kubeconfig_yaml",
    "kwok_argv",
    "kwok_cidr",
    "scheduler_argv",
]

SERVICE_CIDR = "10.96.0.0/16"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class BedPaths:
    """Files and directories of one local bed, all under its cluster directory."""

    root: Path

    @property
    def pki(self) -> Path:
        """Certificates and keys."""
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        """One log file per process."""
        return self.root / "logs"

    @property
    def kubeconfig(self) -> Path:
        """Admin kubeconfig (system:masters) used by users, tests and the bed's components."""
        return self.root / "kubeconfig"

    @property
    def kwok_kubeconfig(self) -> Path:
        """kwok's kubeconfig (its own client identity, ``zoneproof-kwok``)."""
        return self.root / "kwok.kubeconfig"

    @property
    def audit_policy(self) -> Path:
        """The API server's audit policy."""
        return self.root / "audit-policy.yaml"

    @property
    def audit_log(self) -> Path:
        """The API server's audit log (JSON lines)."""
        return self.logs / "audit.log"

    @property
    def state(self) -> Path:
        """The state file (spec, ports, processes)."""
        return self.root / "state.json"

    def etcd_data(self, member: str) -> Path:
        """Data dir of etcd member ``member``."""
        return self.root / "etcd" / member

    def cert(self, stem: str) -> Path:
        """``pki/<stem>.crt``."""
        return self.pki / f"{stem}.crt"

    def key(self, stem: str) -> Path:
        """``pki/<stem>.key``."""
        return self.pki / f"{stem}.key"


def etcd_member_names(spec: ClusterSpec) -> list[str]:
    """``etcd-0`` … ``etcd-<n-1>``."""
    return [f"etcd-{i}" for i in range(spec.etcd_members)]


def etcd_url(port: int) -> str:
    """An etcd URL on loopback (TLS)."""
    return f"https://{LOOPBACK}:{port}"



def etcd_argv(binary: Path, spec: ClusterSpec, ports: Ports, paths: BedPaths, index: int
              ) -> list[str]:
    """One raft member; fast heartbeats and no fsync (test bed), but real raft. TLS with
    client-certificate auth on the client and the peer port (the etcd CA's certificates)."""
    names = etcd_member_names(spec)
    initial = ",".join(f"{n}={etcd_url(p)}" for n, p in zip(names, ports.etcd_peer, strict=True))
    return [
        str(binary), "--name", names[index],
        "--data-dir", str(paths.etcd_data(names[index])),
        "--listen-client-urls", etcd_url(ports.etcd_client[index]),
        "--advertise-client-urls", etcd_url(ports.etcd_client[index]),
        "--listen-peer-urls", etcd_url(ports.etcd_peer[index]),
        "--initial-advertise-peer-urls", etcd_url(ports.etcd_peer[index]),
        "--initial-cluster", initial,
        "--initial-cluster-state", "new",
        "--initial-cluster-token", f"zoneproof-{spec.name}",
        "--cert-file", str(paths.cert("etcd-server")), "--key-file", str(paths.key("etcd-server")),
        "--client-cert-auth", "--trusted-ca-file", str(paths.cert("etcd-ca")),
        "--peer-cert-file", str(paths.cert("etcd-peer")),
        "--peer-key-file", str(paths.key("etcd-peer")),
        "--peer-client-cert-auth", "--peer-trusted-ca-file", str(paths.cert("etcd-ca")),
        "--heartbeat-interval", "100",
        "--election-timeout", str(round(spec.timings.etcd_election_timeout_s * 1000)),
        "--unsafe-no-fsync", "--log-level", "warn",
    ]


def apiserver_argv(binary: Path, spec: ClusterSpec, ports: Ports, paths: BedPaths) -> list[str]:
    """kube-apiserver against every etcd member, TLS, SA keys, default admission (webhooks on)."""
    etcd = ",".join(etcd_url(p) for p in ports.etcd_client)
    toleration = str(spec.timings.toleration_s)
    return [
        str(binary),
        "--etcd-servers", etcd,
        "--etcd-cafile", str(paths.cert("etcd-ca")),
        "--etcd-certfile", str(paths.cert("apiserver-etcd-client")),
        "--etcd-keyfile", str(paths.key("apiserver-etcd-client")),
        "--bind-address", LOOPBACK, "--secure-port", str(ports.apiserver),
        "--advertise-address", LOOPBACK, "--endpoint-reconciler-type", "none",
        "--tls-cert-file", str(paths.cert("apiserver")),
        "--tls-private-key-file", str(paths.key("apiserver")),
        "--client-ca-file", str(paths.cert("ca")),
        "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
        "--service-account-key-file", str(paths.cert("sa")),
        "--service-account-signing-key-file", str(paths.key("sa")),
        "--service-cluster-ip-range", SERVICE_CIDR,
        "--authorization-mode", "Node,RBAC",
        "--allow-privileged=true",
        "--default-not-ready-toleration-seconds", toleration,
        "--default-unreachable-toleration-seconds", toleration,
        "--audit-policy-file", str(paths.audit_policy),
        "--audit-log-path", str(paths.audit_log),
        "--profiling=false",
    ]


def _kubeconfig_flags(paths: BedPaths) -> list[str]:
    kc = str(paths.kubeconfig)
    return ["--kubeconfig", kc, "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc]


def controller_manager_argv(binary: Path, spec: ClusterSpec, ports: Ports, paths: BedPaths
                            ) -> list[str]:
    """kcm with every default controller but nodeipam (no CIDRs), fast node lifecycle."""
    t = spec.timings
    return [
        str(binary), *_kubeconfig_flags(paths),
        "--bind-address", LOOPBACK, "--secure-port", str(ports.controller_manager),
        "--controllers", "*,-nodeipam",
        "--leader-elect=false",
        "--use-service-account-credentials=true",
        "--service-account-private-key-file", str(paths.key("sa")),
        "--root-ca-file", str(paths.cert("ca")),
        "--cluster-signing-cert-file", str(paths.cert("ca")),
        "--cluster-signing-key-file", str(paths.key("ca")),
        "--node-monitor-period", f"{t.node_monitor_period_s:g}s",
        "--node-monitor-grace-period", f"{t.node_monitor_grace_period_s:g}s",
        "--kube-api-qps", "200", "--kube-api-burst", "400",
        "--profiling=false",
    ]


def scheduler_argv(binary: Path, ports: Ports, paths: BedPaths) -> list[str]:
    """kube-scheduler, no leader election (one instance)."""
    return [str(binary), *_kubeconfig_flags(paths), "--bind-address", LOOPBACK,
            "--secure-port", str(ports.scheduler), "--leader-elect=false",
            "--kube-api-qps", "200", "--kube-api-burst", "400", "--profiling=false"]


def kwok_cidr(index: int) -> str:
    """A /24 of pod IPs per kwok process, so fake pods on different nodes never share an IP."""
    return f"10.{128 + index // 256}.{index % 256}.0/24"


#: zoneproof's own kwok stages, after kwok's: a returning fake kubelet re-readies its pods.
OWN_KWOK_STAGES = (Path(str(resources.files("zoneproof.cluster.local") / "kwok_stages"
                            / "pod-ready-again.yaml")),)


def kwok_argv(binary: Path, spec: ClusterSpec, paths: BedPaths, stages: tuple[Path, ...], *,
              group: str, index: int, kwok_per: KwokPer = "node") -> list[str]:
    """kwok faking the kubelet of one node (kwok_per=node) or of one zone's nodes, with
    kwok's ``stages`` and zoneproof's own."""
    if kwok_per == "node":
        manage = ["--manage-single-node", group]
    else:
        manage = ["--manage-nodes-with-label-selector", kubernetes.zone_selector(group)]
    return [
        str(binary), "--kubeconfig", str(paths.kwok_kubeconfig),
        "--config", ",".join(str(s) for s in (*stages, *OWN_KWOK_STAGES)),
        *manage,
        "--cidr", kwok_cidr(index),
        "--node-lease-duration-seconds", str(spec.timings.node_lease_duration_s),
    ]


def kubeconfig_yaml(name: str, server_port: int, paths: BedPaths, cert: str = "admin") -> str:
    """A kubeconfig for the bed with client certificate ``pki/<cert>.crt`` (system:masters)."""
    user, cluster = f"{name}-{cert}", f"zoneproof-{name}"
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": cluster,
        "clusters": [{"name": cluster, "cluster": {
            "server": f"https://{LOOPBACK}:{server_port}",
            "certificate-authority": str(paths.cert("ca"))}}],
        "users": [{"name": user, "user": {
            "client-certificate": str(paths.cert(cert)),
            "client-key": str(paths.key(cert))}}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
    }
    return yaml.safe_dump(doc, sort_keys=False)
