"""The local bed's PKI: CA, apiserver serving cert, admin client cert, service-account key."""

from __future__ import annotations

from zoneproof._util import certs
from zoneproof.cluster.local.render import SERVICE_CIDR, BedPaths

__all__ = ["write_pki"]


def _service_ip() -> str:
    """First address of the service CIDR: the ``kubernetes`` Service's ClusterIP."""
    network, _ = SERVICE_CIDR.split("/")
    a, b, c, _ = network.split(".")
    return f"{a}.{b}.{c}.1"


def write_pki(paths: BedPaths) -> None:
    """Generate and write every certificate and key the bed needs."""
    paths.pki.mkdir(parents=True, exist_ok=True)
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
    paths.key("sa").touch(mode=0o600)
    paths.key("sa").write_bytes(sa_key)
    paths.cert("sa").write_bytes(certs.public_key_pem(sa_key))
