"""The local bed's PKI: CA, apiserver serving cert, admin client cert, service-account key,
and etcd's own CA with server, peer and client certificates.

etcd has a CA of its own: the cluster CA also signs every CSR kcm approves (component
identities), and none of those may reach etcd around the API server.
"""

from __future__ import annotations

from zoneproof._util import certs, files
from zoneproof.cluster.local.render import SERVICE_CIDR, BedPaths

__all__ = ["write_pki"]


def _service_ip() -> str:
    """First address of the service CIDR: the ``kubernetes`` Service's ClusterIP."""
    network, _ = SERVICE_CIDR.split("/")
    a, b, c, _ = network.split(".")
    return f"{a}.{b}.{c}.1"


def write_pki(paths: BedPaths) -> None:
    """Generate and write every certificate and key the bed needs."""
    files.private_dir(paths.pki)
    ca = certs.make_ca("zoneproof-ca")
    ca.write(paths.pki, "ca")
    sans = ("127.0.0.1", "localhost", _service_ip(), "kubernetes", "kubernetes.default",
            "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
    certs.issue_cert(ca, "kube-apiserver", sans=sans).write(paths.pki, "apiserver")
    certs.issue_cert(ca, "zoneproof-admin", organization="system:masters",
                     client=True).write(paths.pki, "admin")
    # kwok acts as every node's kubelet; its own name keeps it apart in audit logs
    certs.issue_cert(ca, "zoneproof-kwok", organization="system:masters",
                     client=True).write(paths.pki, "kwok")
    sa_key = certs.new_key_pem()
    files.write_private(paths.key("sa"), sa_key)
    paths.cert("sa").write_bytes(certs.public_key_pem(sa_key))
    etcd_ca = certs.make_ca("zoneproof-etcd-ca")
    etcd_ca.write(paths.pki, "etcd-ca")
    loopback = ("127.0.0.1", "localhost")
    # client usage too: etcd's JSON gateway dials its own gRPC port with this certificate
    certs.issue_cert(etcd_ca, "etcd-server", sans=loopback, client=True, server=True).write(
        paths.pki, "etcd-server")
    certs.issue_cert(etcd_ca, "etcd-peer", sans=loopback, client=True, server=True).write(
        paths.pki, "etcd-peer")
    certs.issue_cert(etcd_ca, "kube-apiserver-etcd-client", client=True).write(
        paths.pki, "apiserver-etcd-client")
    certs.issue_cert(etcd_ca, "zoneproof-etcd-health", client=True).write(
        paths.pki, "etcd-health")
