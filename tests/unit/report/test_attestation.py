"""The attestation: a valid in-toto Statement, signed in DSSE; keys refused with the fix named."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from zoneproof import errors
from zoneproof.report import attestation

if TYPE_CHECKING:  # the fixtures' types (tests/unit/conftest.py)
    from conftest import KeyMaker, KeyPair


SUBJECTS = {"b.txt": "b" * 64, "a/c.json": "c" * 64}
PREDICATE = {"verdict": "PASS", "suites": {"chaos": {"verdict": "PASS"}}}


def _signed(keys: KeyPair) -> bytes:
    return attestation.sign(attestation.statement(SUBJECTS, PREDICATE),
                            attestation.load_signer(keys.private))


def test_statement_is_in_toto_v1_with_our_predicate() -> None:
    document = json.loads(attestation.statement(SUBJECTS, PREDICATE))
    assert document["_type"] == "https://in-toto.io/Statement/v1"
    assert document["predicateType"] == attestation.PREDICATE_TYPE
    assert [s["name"] for s in document["subject"]] == ["a/c.json", "b.txt"]
    assert document["subject"][1]["digest"] == {"sha256": "b" * 64}
    assert document["predicate"] == PREDICATE


def test_statement_without_subjects_is_refused() -> None:
    with pytest.raises(ValueError, match="subject"):
        attestation.statement({}, PREDICATE)


def test_signed_envelope_opens_with_the_public_key(keys: KeyPair) -> None:
    envelope = json.loads(_signed(keys))
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert len(envelope["signatures"]) == 1
    opened = attestation.open_envelope(_signed(keys), attestation.load_public_key(keys.public))
    assert opened.subjects == SUBJECTS
    assert opened.predicate == PREDICATE


def test_another_key_is_named(keys: KeyPair, other_keys: KeyPair) -> None:
    with pytest.raises(errors.VerificationError, match="not by the given key"):
        attestation.open_envelope(_signed(keys), attestation.load_public_key(other_keys.public))


def _edit_payload(envelope: bytes, edit: str, into: str) -> bytes:
    data = json.loads(envelope)
    payload = base64.b64decode(data["payload"]).decode()
    assert edit in payload
    data["payload"] = base64.b64encode(payload.replace(edit, into).encode()).decode()
    return json.dumps(data).encode()


def test_an_edited_verdict_breaks_the_signature(keys: KeyPair) -> None:
    edited = _edit_payload(_signed(keys), '"verdict": "PASS"', '"verdict": "FAIL"')
    with pytest.raises(errors.VerificationError, match="signature does not match"):
        attestation.open_envelope(edited, attestation.load_public_key(keys.public))


def test_an_edited_signature_is_caught(keys: KeyPair) -> None:
    data = json.loads(_signed(keys))
    sig = bytearray(base64.b64decode(data["signatures"][0]["sig"]))
    sig[len(sig) // 2] ^= 0x01
    data["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    with pytest.raises(errors.VerificationError, match="signature does not match"):
        attestation.open_envelope(json.dumps(data).encode(),
                                  attestation.load_public_key(keys.public))


@pytest.mark.parametrize(("text", "message"), [
    (b"not json", "not a DSSE envelope"),
    (b'{"payload": "e30=", "payloadType": "text/plain", "signatures": []}', "payloadType"),
    (b'{"payload": "e30=", "payloadType": "application/vnd.in-toto+json", "signatures": []}',
     "no signature"),
])
def test_malformed_envelopes_are_named(text: bytes, message: str, keys: KeyPair) -> None:
    with pytest.raises(errors.VerificationError, match=message):
        attestation.open_envelope(text, attestation.load_public_key(keys.public))


def test_p384_keys_work_too(make_keys: KeyMaker) -> None:
    pair = make_keys("ecdsa-p384")
    opened = attestation.open_envelope(_signed(pair), attestation.load_public_key(pair.public))
    assert opened.predicate["verdict"] == "PASS"


def test_an_encrypted_key_needs_the_password(make_keys: KeyMaker, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    pair = make_keys("ed25519", b"s3cret")
    monkeypatch.delenv(attestation.PASSWORD_ENV, raising=False)
    with pytest.raises(errors.ConfigError,
                       match=f"encrypted: put its password in \\${attestation.PASSWORD_ENV}"):
        attestation.load_signer(pair.private)
    monkeypatch.setenv(attestation.PASSWORD_ENV, "s3cret")
    assert attestation.load_signer(pair.private).public_key.keytype == "ed25519"


@pytest.mark.parametrize(("which", "message"), [
    ("missing", "No such file"),
    ("public-as-private", "is a public key: certify signs with the vendor's PRIVATE key"),
    ("garbage", "not a PEM private key"),
    ("rsa", "is RSAPrivateKey: use Ed25519 or ECDSA P-256/P-384"),
    ("secp256k1", "ECDSA on secp256k1: use Ed25519 or ECDSA P-256/P-384"),
])
def test_bad_signing_keys_name_the_fix(which: str, message: str, tmp_path: Path,
                                       keys: KeyPair, make_keys: KeyMaker) -> None:
    path = {"missing": tmp_path / "nope.pem", "public-as-private": keys.public,
            "garbage": tmp_path / "garbage.pem"}.get(which)
    if which == "garbage":
        tmp_path.joinpath("garbage.pem").write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n")
    elif which == "rsa":
        path = make_keys("rsa").private
    elif which == "secp256k1":
        path = make_keys("ecdsa-secp256k1").private
    assert path is not None
    with pytest.raises(errors.ConfigError, match=message):
        attestation.load_signer(path)


@pytest.mark.parametrize(("which", "message"), [
    ("private-as-public", "is a private key: verify takes the vendor's PUBLIC key"),
    ("garbage", "not a PEM public key"),
])
def test_bad_public_keys_name_the_fix(which: str, message: str, tmp_path: Path,
                                      keys: KeyPair) -> None:
    path = keys.private if which == "private-as-public" else tmp_path / "garbage.pub"
    if which == "garbage":
        path.write_text("hello")
    with pytest.raises(errors.ConfigError, match=message):
        attestation.load_public_key(path)
