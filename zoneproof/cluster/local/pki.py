"""The local bed's PKI: CA, apiserver serving cert, admin client cert, service-account key,
and etcd's own CA with server, peer and client certificates.

etcd has a CA of its own: the cluster CA also signs every CSR kcm approves (component
identities), and none of those may reach etcd around the API server. The PKI names no port,
so it is made before the bed's ports are chosen (``make``) and written after (``write``):
the time between choosing a free block and binding it stays short.
"""

from __future__ import annotations

from dataclasses import dataclass

from zoneproof._util import certs, files
from zoneproof.cluster.local.render import SERVICE_CIDR, BedPaths

__all__ = ["Pki", "make", "write"]


def _service_ip() -> str:
    """First address of the service CIDR: the ``kubernetes`` Service's ClusterIP."""
    network, _ = SERVICE_CIDR.split("/")
    a, b, c, _ = network.split(".")
    return f"{a}.{b}.{c}.1"


@dataclass(frozen=True, slots=True)
class Pki:
    """Every certificate (by file stem) and the service-account key of one bed."""

    pairs: dict[str, certs.KeyPair]
    sa_key: bytes


def make(addresses: tuple[str, ...] = ()) -> Pki:
    """Generate every certificate and key the bed needs; the API servers' and etcd's serving
    certificates are valid on loopback and at ``addresses`` (a zoned bed's)."""
    ca = certs.make_ca("zoneproof-ca")
    sans = ("127.0.0.1", "localhost", _service_ip(), "kubernetes", "kubernetes.default",
            "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", *addresses)
    etcd_ca = certs.make_ca("zoneproof-etcd-ca")
    loopback = ("127.0.0.1", "localhost", *addresses)
    return Pki({
        "ca": ca,
        "apiserver": certs.issue_cert(ca, "kube-apiserver", sans=sans),
        "admin": certs.issue_cert(ca, "zoneproof-admin", organization="system:masters",
                                  client=True),
        # kwok acts as every node's kubelet; its own name keeps it apart in audit logs
        "kwok": certs.issue_cert(ca, "zoneproof-kwok", organization="system:masters",
                                 client=True),
        "etcd-ca": etcd_ca,
        # client usage too: etcd's JSON gateway dials its own gRPC port with this certificate
        "etcd-server": certs.issue_cert(etcd_ca, "etcd-server", sans=loopback, client=True,
                                        server=True),
        "etcd-peer": certs.issue_cert(etcd_ca, "etcd-peer", sans=loopback, client=True,
                                      server=True),
        "apiserver-etcd-client": certs.issue_cert(etcd_ca, "kube-apiserver-etcd-client",
                                                  client=True),
        "etcd-health": certs.issue_cert(etcd_ca, "zoneproof-etcd-health", client=True),
    }, certs.new_key_pem())


def write(paths: BedPaths, pki: Pki) -> None:
    """Write ``pki`` into the bed's ``pki/`` (keys 0600, the directory 0700)."""
    files.private_dir(paths.pki)
    for stem, pair in pki.pairs.items():
        pair.write(paths.pki, stem)
    files.write_private(paths.key("sa"), pki.sa_key)
    paths.cert("sa").write_bytes(certs.public_key_pem(pki.sa_key))
