"""Command lines and kubeconfig of the local bed."""

from pathlib import Path

import yaml

from zoneproof.cluster.local import render
from zoneproof.cluster.local.ports import Ports
from zoneproof.cluster.spec import ClusterSpec, Timings

SPEC = ClusterSpec(timings=Timings(node_monitor_grace_period_s=9, toleration_s=12))
PORTS = Ports.from_base(30000, 3)
PATHS = render.BedPaths(Path("/bed"))


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_etcd_members_form_one_raft_cluster() -> None:
    argvs = [render.etcd_argv(Path("/etcd"), SPEC, PORTS, PATHS, i) for i in range(3)]
    initial = {_flag(a, "--initial-cluster") for a in argvs}
    assert initial == {"etcd-0=https://127.0.0.1:30003,etcd-1=https://127.0.0.1:30004,"
                       "etcd-2=https://127.0.0.1:30005"}
    assert [_flag(a, "--listen-client-urls") for a in argvs] == [
        "https://127.0.0.1:30000", "https://127.0.0.1:30001", "https://127.0.0.1:30002"]
    assert all(_flag(a, "--data-dir").startswith("/bed/etcd/") for a in argvs)
    assert {_flag(a, "--election-timeout") for a in argvs} == {"1000"}  # the stated timing


def test_etcd_requires_client_certificates_of_its_own_ca_on_both_ports() -> None:
    argv = render.etcd_argv(Path("/etcd"), SPEC, PORTS, PATHS, 0)
    assert "--client-cert-auth" in argv and "--peer-client-cert-auth" in argv
    assert _flag(argv, "--trusted-ca-file") == _flag(argv, "--peer-trusted-ca-file") == \
        "/bed/pki/etcd-ca.crt"
    assert _flag(argv, "--cert-file") == "/bed/pki/etcd-server.crt"
    assert _flag(argv, "--peer-cert-file") == "/bed/pki/etcd-peer.crt"
    apiserver = render.apiserver_argv(Path("/a"), SPEC, PORTS, PATHS)
    assert _flag(apiserver, "--etcd-cafile") == "/bed/pki/etcd-ca.crt"
    assert _flag(apiserver, "--etcd-certfile") == "/bed/pki/apiserver-etcd-client.crt"
    assert _flag(apiserver, "--client-ca-file") != _flag(apiserver, "--etcd-cafile")


def test_apiserver_uses_all_members_and_spec_tolerations() -> None:
    argv = render.apiserver_argv(Path("/a"), SPEC, PORTS, PATHS)
    assert _flag(argv, "--etcd-servers").count("https://") == 3
    assert _flag(argv, "--default-unreachable-toleration-seconds") == "12"
    assert _flag(argv, "--endpoint-reconciler-type") == "none"
    assert "--enable-admission-plugins" not in argv  # defaults keep MutatingAdmissionWebhook


def test_controller_manager_timings_and_no_nodeipam() -> None:
    argv = render.controller_manager_argv(Path("/k"), SPEC, PORTS, PATHS)
    assert _flag(argv, "--node-monitor-grace-period") == "9s"
    assert _flag(argv, "--controllers") == "*,-nodeipam"


def test_kwok_per_node_and_per_zone() -> None:
    stages = (Path("/s/a.yaml"), Path("/s/b.yaml"))
    per_node = render.kwok_argv(Path("/kwok"), SPEC, PATHS, stages, group="zone-a-node-1", index=0)
    assert _flag(per_node, "--manage-single-node") == "zone-a-node-1"
    own = render.OWN_KWOK_STAGES
    assert _flag(per_node, "--config") == ",".join(["/s/a.yaml", "/s/b.yaml", *map(str, own)])
    assert all(stage.is_file() for stage in own)
    per_zone = render.kwok_argv(Path("/kwok"), SPEC, PATHS, stages, group="zone-b", index=1,
                                kwok_per="zone")
    assert _flag(per_zone, "--manage-nodes-with-label-selector") == \
        "topology.kubernetes.io/zone=zone-b"


def test_kwok_cidrs_are_distinct() -> None:
    cidrs = {render.kwok_cidr(i) for i in range(600)}
    assert len(cidrs) == 600


def test_kubeconfig_points_at_apiserver_with_admin_cert() -> None:
    doc = yaml.safe_load(render.kubeconfig_yaml("bed", 30006, PATHS))
    assert doc["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:30006"
    assert doc["users"][0]["user"]["client-certificate"] == "/bed/pki/admin.crt"
