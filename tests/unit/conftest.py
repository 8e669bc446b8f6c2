"""Fixtures shared by unit tests: vendor signing keys (Ed25519 and ECDSA PEM pairs) for the
certification bundle tests; vendor programs on PATH and a CA bundle for component sources."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from zoneproof._util import certs


@dataclass(frozen=True)
class KeyPair:
    """A private key PEM and its public half."""

    private: Path
    public: Path


def _write_pair(key: PrivateKeyTypes, directory: Path, name: str,
                encryption: serialization.KeySerializationEncryption | None = None) -> KeyPair:
    directory.mkdir(parents=True, exist_ok=True)
    private, public = directory / f"{name}.pem", directory / f"{name}.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          encryption or serialization.NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return KeyPair(private, public)


def _make_key(kind: str) -> PrivateKeyTypes:
    if kind == "rsa":
        return rsa.generate_private_key(65537, 2048)
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    return ec.generate_private_key({"ecdsa-p256": ec.SECP256R1(), "ecdsa-p384": ec.SECP384R1(),
                                    "ecdsa-secp256k1": ec.SECP256K1()}[kind])


@pytest.fixture(params=["ed25519", "ecdsa-p256"])
def keys(request: pytest.FixtureRequest, tmp_path: Path) -> KeyPair:
    """A vendor key pair of each supported type the brief names."""
    return _write_pair(_make_key(request.param), tmp_path / "keys", request.param)


@pytest.fixture
def other_keys(tmp_path: Path) -> KeyPair:
    """Somebody else's key pair."""
    return _write_pair(_make_key("ed25519"), tmp_path / "other", "other")


KeyMaker = Callable[..., KeyPair]


@pytest.fixture
def make_keys(tmp_path: Path) -> KeyMaker:
    """``make_keys(kind, password=b"")``: a fresh PEM pair of ``kind`` (ed25519, ecdsa-p256,
    ecdsa-p384, ecdsa-secp256k1, rsa), its private half encrypted with ``password`` if given."""
    made = iter(range(1000))

    def make(kind: str, password: bytes = b"") -> KeyPair:
        encryption = serialization.BestAvailableEncryption(password) if password else None
        return _write_pair(_make_key(kind), tmp_path / "made", f"{kind}-{next(made)}", encryption)

    return make


#: Programs vendor command templates in unit tests start (components are refused up front
#: when their program is missing).
VENDOR_PROGRAMS = ("my-webhook", "my-controller", "hook", "ctl", "c", "w")


@pytest.fixture
def vendor_programs(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> Path:
    """``VENDOR_PROGRAMS`` as executables on PATH (they only exit); their directory."""
    directory = tmp_path_factory.mktemp("vendor-bin")
    for name in VENDOR_PROGRAMS:
        (directory / name).write_text("#!/bin/sh\nexit 0\n")
        (directory / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}:{os.environ.get('PATH', '')}")
    return directory


@pytest.fixture
def ca_bundle(tmp_path: Path) -> Path:
    """``ca.pem``: a PEM CA certificate (what a webhook URL's ``ca_bundle`` must be)."""
    path = tmp_path / "ca.pem"
    path.write_bytes(certs.make_ca("test-ca").cert_pem)
    return path
