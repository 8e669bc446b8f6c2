"""The certification bundle's in-toto attestation: a Statement in a DSSE envelope, signed.

The Statement (in-toto v1) names every file of the bundle as a subject (name + SHA-256)
and carries the test result as its predicate (``PREDICATE_TYPE``). Its schema is checked
with the in-toto attestation framework's own bindings (``in_toto_attestation``); the DSSE
envelope, its pre-authentication encoding, the signers and the verification are
securesystemslib's (``Envelope``, ``CryptoSigner``, ``SSlibKey``). Keys are PEM files:
Ed25519 or ECDSA (P-256, P-384); an encrypted private key takes its password from
``$ZONEPROOF_KEY_PASSWORD``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from google.protobuf import json_format
from in_toto_attestation.v1 import statement as intoto_statement
from in_toto_attestation.v1 import statement_pb2
from securesystemslib import exceptions as sslib_errors
from securesystemslib.dsse import Envelope
from securesystemslib.signer import CryptoSigner, SSlibKey

from zoneproof import errors

__all__ = ["PASSWORD_ENV", "PAYLOAD_TYPE", "PREDICATE_TYPE", "STATEMENT_TYPE", "Attested",
           "load_public_key", "load_signer", "open_envelope", "sign", "statement"]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://zoneproof.dev/certification/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PASSWORD_ENV = "ZONEPROOF_KEY_PASSWORD"
_CURVES = (ec.SECP256R1, ec.SECP384R1)
_SUPPORTED = "Ed25519 or ECDSA P-256/P-384"
_MAKE_KEY = ("make one with `openssl genpkey -algorithm ed25519 -out vendor.pem` (public half: "
             "`openssl pkey -in vendor.pem -pubout -out vendor.pub`)")


# -- keys ------------------------------------------------------------------------------------
def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise errors.ConfigError(f"{what} {path}: {exc.strerror or exc}; {_MAKE_KEY}") from None


def _check_type(key: object, path: Path) -> None:
    if isinstance(key, ed25519.Ed25519PrivateKey | ed25519.Ed25519PublicKey):
        return
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        if isinstance(key.curve, _CURVES):
            return
        raise errors.ConfigError(f"key {path} is ECDSA on {key.curve.name}: use {_SUPPORTED}")
    raise errors.ConfigError(f"key {path} is {type(key).__name__.lstrip('_')}: use {_SUPPORTED}; "
                             f"{_MAKE_KEY}")


def load_signer(path: Path) -> CryptoSigner:
    """The signer of the PEM private key at ``path``; ConfigError names the fix."""
    data = _read(path, "the signing key (--key)")
    password = os.environ.get(PASSWORD_ENV)
    try:
        key = serialization.load_pem_private_key(data, password.encode() if password else None)
    except TypeError:
        raise errors.ConfigError(f"the signing key {path} is encrypted: put its password in "
                                 f"${PASSWORD_ENV}") from None
    except ValueError as exc:
        if b"PUBLIC KEY-----" in data:
            raise errors.ConfigError(f"{path} is a public key: certify signs with the vendor's "
                                     "PRIVATE key (verify takes the public one)") from None
        raise errors.ConfigError(f"{path} is not a PEM private key ({exc}); {_MAKE_KEY}") from None
    _check_type(key, path)
    return CryptoSigner(key)


def load_public_key(path: Path) -> SSlibKey:
    """The PEM public key at ``path`` as a verifier; ConfigError names the fix."""
    data = _read(path, "the public key (--key)")
    if b"PRIVATE KEY-----" in data:
        raise errors.ConfigError(f"{path} is a private key: verify takes the vendor's PUBLIC key "
                                 f"(`openssl pkey -in {path} -pubout -out vendor.pub`)")
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError as exc:
        raise errors.ConfigError(f"{path} is not a PEM public key ({exc}); {_MAKE_KEY}") from None
    _check_type(key, path)
    return SSlibKey.from_crypto(key)


# -- the statement ---------------------------------------------------------------------------
def _validate(document: Mapping[str, Any]) -> None:
    """ValueError unless ``document`` is a valid in-toto v1 Statement (the framework's check)."""
    try:
        message = json_format.ParseDict(document, statement_pb2.Statement())
    except json_format.ParseError as exc:
        raise ValueError(str(exc)) from None
    intoto_statement.Statement.copy_from_pb(message).validate()


def statement(subjects: Mapping[str, str], predicate: Mapping[str, Any]) -> bytes:
    """The Statement's JSON: ``subjects`` (file name → SHA-256 hex), ``predicate`` (the result)."""
    document = {"_type": STATEMENT_TYPE,
                "subject": [{"name": name, "digest": {"sha256": digest}}
                            for name, digest in sorted(subjects.items())],
                "predicateType": PREDICATE_TYPE, "predicate": dict(predicate)}
    _validate(document)
    return json.dumps(document, indent=1, sort_keys=True).encode()


def sign(payload: bytes, signer: CryptoSigner) -> bytes:
    """The DSSE envelope (JSON) of ``payload`` signed by ``signer``."""
    envelope = Envelope(payload, PAYLOAD_TYPE, {})
    envelope.sign(signer)
    return json.dumps(envelope.to_dict(), indent=1).encode()


@dataclass(frozen=True, slots=True)
class Attested:
    """What a verified attestation says: each subject's SHA-256 and the predicate."""

    subjects: dict[str, str]
    predicate: dict[str, Any]
    keyid: str


def _envelope(data: bytes) -> Envelope:
    try:
        return Envelope.from_dict(json.loads(data))
    except (ValueError, KeyError, TypeError, sslib_errors.FormatError) as exc:
        raise errors.VerificationError(f"the attestation is not a DSSE envelope: {exc!r}") from None


def open_envelope(data: bytes, key: SSlibKey) -> Attested:
    """The attested subjects and predicate, once ``key`` verified the envelope's signature.

    VerificationError says what is wrong: not an envelope, another key, a signature that
    does not match (the statement or the signature altered), not our Statement.
    """
    envelope = _envelope(data)
    if envelope.payload_type != PAYLOAD_TYPE:
        raise errors.VerificationError(f"the attestation's payloadType is "
                                       f"{envelope.payload_type!r}, not {PAYLOAD_TYPE!r}")
    if not envelope.signatures:
        raise errors.VerificationError("the attestation carries no signature")
    if key.keyid not in envelope.signatures:
        raise errors.VerificationError(
            f"the attestation is signed by key id(s) {', '.join(envelope.signatures)}, not by "
            f"the given key (id {key.keyid}): wrong public key, or the signature was replaced")
    try:
        envelope.verify([key], 1)
    except sslib_errors.VerificationError:
        raise errors.VerificationError(
            "the attestation's signature does not match its statement: the statement (subjects "
            "or verdict) or the signature was altered") from None
    try:
        document = json.loads(envelope.payload)
        _validate(document)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise errors.VerificationError(f"the signed payload is not an in-toto Statement: {exc}"
                                       ) from None
    if document["predicateType"] != PREDICATE_TYPE:
        raise errors.VerificationError(f"the statement's predicateType is "
                                       f"{document['predicateType']!r}, not {PREDICATE_TYPE!r}")
    subjects: dict[str, str] = {}
    for subject in document["subject"]:
        name, digest = subject["name"], subject["digest"].get("sha256", "")
        if name in subjects or not digest:
            raise errors.VerificationError(f"the statement names {name!r} twice or without a "
                                           "sha256 digest")
        subjects[name] = digest
    return Attested(subjects, dict(document["predicate"]), key.keyid)
