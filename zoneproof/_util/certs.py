"""Throw-away PKI for test beds and webhooks: a CA, serving and client certificates, RSA keys."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from zoneproof._util import files

__all__ = [
    "KeyPair",
    "issue_cert",
    "make_ca",
    "make_csr",
    "make_rsa_key",
    "new_key_pem",
    "public_key_pem",
]

_VALIDITY = dt.timedelta(days=365)
_KEY_BITS = 2048


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A PEM certificate and its PEM private key."""

    cert_pem: bytes
    key_pem: bytes

    def write(self, directory: Path, stem: str) -> tuple[Path, Path]:
        """Write ``<stem>.crt`` and ``<stem>.key`` (mode 0600) into ``directory``."""
        crt, key = directory / f"{stem}.crt", directory / f"{stem}.key"
        crt.write_bytes(self.cert_pem)
        files.write_private(key, self.key_pem)
        return crt, key


def make_rsa_key() -> rsa.RSAPrivateKey:
    """A fresh RSA key (2048 bits: fast to make, accepted everywhere)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=_KEY_BITS)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def new_key_pem() -> bytes:
    """A fresh RSA private key as PEM (e.g. the service-account signing key)."""
    return _key_pem(make_rsa_key())


def public_key_pem(key_pem: bytes) -> bytes:
    """The PEM public key of a PEM private key (service-account verification key)."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attrs)


def _builder(subject: x509.Name, issuer: x509.Name, key: rsa.RSAPrivateKey,
             validity: dt.timedelta = _VALIDITY) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + validity))


def make_ca(common_name: str, validity: dt.timedelta = _VALIDITY) -> KeyPair:
    """A self-signed CA, valid for ``validity``."""
    key = make_rsa_key()
    name = _name(common_name)
    cert = (_builder(name, name, key, validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue_cert(ca: KeyPair, common_name: str, *, sans: tuple[str, ...] = (),
               organization: str | None = None, client: bool = False,
               server: bool | None = None, validity: dt.timedelta = _VALIDITY) -> KeyPair:
    """A certificate signed by ``ca``, valid for ``validity``: serving (SANs: DNS names or
    IPs), ``client``, or both (``client=True, server=True``: an etcd peer)."""
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    assert isinstance(ca_key, rsa.RSAPrivateKey)
    key = make_rsa_key()
    usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
    if server if server is not None else not client:
        usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
    builder = (_builder(_name(common_name, organization), ca_cert.subject, key, validity)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage(usages), critical=False))
    if sans:
        names: list[x509.GeneralName] = []
        for san in sans:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(san)))
            except ValueError:
                names.append(x509.DNSName(san))
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def make_csr(common_name: str, organizations: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """A PEM certificate signing request for a client identity, and its PEM private key."""
    key = make_rsa_key()
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    attrs += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    csr = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs))
           .sign(key, hashes.SHA256()))
    return csr.public_bytes(serialization.Encoding.PEM), _key_pem(key)
