"""The bundle verifies as written, and every kind of tampering fails verify, naming what."""

from __future__ import annotations

import base64
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from zoneproof import errors
from zoneproof.report import attestation, bundle

if TYPE_CHECKING:  # the fixtures' types (tests/unit/conftest.py)
    from conftest import KeyPair


PREDICATE = {"verdict": "PASS", "vendor": {"vendor": "acme"}}
Members = dict[str, bytes]


@pytest.fixture
def written(tmp_path: Path, keys: KeyPair) -> Path:
    evidence = tmp_path / "summary.json"
    evidence.write_text('{"verdict": "PASS"}\n')
    return bundle.write(tmp_path / "out" / "b.tar.gz", {
        "certification.yaml": b"verdict: PASS\nvendor: acme\n",
        "summary.json": evidence,
        "chaos/zone-outage/journal.json": b'{"status": "completed"}',
        "allure-report/index.html": b"<html>report</html>"},
        PREDICATE, attestation.load_signer(keys.private), mtime=1_700_000_000)


def _members(path: Path) -> Members:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]


def _repack(path: Path, members: Members, extra: Callable[[tarfile.TarFile], None] | None = None
            ) -> Path:
    out = path.with_name("tampered.tar.gz")
    with tarfile.open(out, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if extra is not None:
            extra(tar)
    return out


def _verify(path: Path, keys: KeyPair) -> bundle.Verified:
    return bundle.verify(path, attestation.load_public_key(keys.public))


def _fails(path: Path, keys: KeyPair, *messages: str) -> str:
    with pytest.raises(errors.VerificationError) as caught:
        _verify(path, keys)
    text = str(caught.value)
    for message in messages:
        assert message in text, text
    return text


def test_a_written_bundle_verifies(written: Path, keys: KeyPair) -> None:
    verified = _verify(written, keys)
    assert verified.verdict == "PASS"
    assert verified.files == 6  # 4 + manifest + attestation
    members = _members(written)
    assert sorted(members) == sorted(["certification.yaml", "summary.json", "allure-report/index.html",
                                      "chaos/zone-outage/journal.json", bundle.MANIFEST,
                                      bundle.ATTESTATION])
    manifest = bundle.parse_manifest(members[bundle.MANIFEST].decode())
    assert set(manifest) == set(members) - {bundle.MANIFEST, bundle.ATTESTATION}


def test_the_manifest_is_sha256sum_format(written: Path) -> None:
    import hashlib

    members = _members(written)
    for line in members[bundle.MANIFEST].decode().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256(members[name]).hexdigest() == digest


def test_writing_is_deterministic(tmp_path: Path, keys: KeyPair) -> None:
    signer = attestation.load_signer(keys.private)
    made = [bundle.write(tmp_path / f"{i}.tar.gz", {"a": b"x"}, PREDICATE, signer, mtime=5)
            for i in range(2)]
    if keys.private.name.startswith("ed25519"):  # ECDSA signatures are randomized
        assert made[0].read_bytes() == made[1].read_bytes()
    assert _members(made[0])[bundle.MANIFEST] == _members(made[1])[bundle.MANIFEST]


@pytest.mark.parametrize("name", ["summary.json", "chaos/zone-outage/journal.json",
                                  "allure-report/index.html"])
def test_one_changed_byte_in_any_file_is_named(written: Path, keys: KeyPair, name: str) -> None:
    members = _members(written)
    data = bytearray(members[name])
    data[0] ^= 0x20
    members[name] = bytes(data)
    text = _fails(_repack(written, members), keys, f"{name}: altered", "manifest says",
                  "attestation says")
    assert len(text.splitlines()) == 1, "only that file is named"


def test_a_changed_verdict_is_named(written: Path, keys: KeyPair) -> None:
    members = _members(written)
    members["certification.yaml"] = members["certification.yaml"].replace(b"PASS", b"FAIL")
    _fails(_repack(written, members), keys, "certification.yaml: altered")


def test_a_manifest_edited_to_match_is_caught_by_the_attestation(written: Path, keys: KeyPair
                                                                 ) -> None:
    import hashlib

    members = _members(written)
    members["summary.json"] = b'{"verdict": "FAIL"}\n'
    manifest = bundle.parse_manifest(members[bundle.MANIFEST].decode())
    manifest["summary.json"] = hashlib.sha256(members["summary.json"]).hexdigest()
    members[bundle.MANIFEST] = bundle.manifest_text(manifest).encode()
    text = _fails(_repack(written, members), keys, f"{bundle.MANIFEST}: altered",
                  "summary.json: altered")
    assert "the manifest says" not in text.split("summary.json: altered")[1].splitlines()[0]


def test_an_edited_predicate_breaks_the_signature(written: Path, keys: KeyPair) -> None:
    members = _members(written)
    envelope = json.loads(members[bundle.ATTESTATION])
    payload = base64.b64decode(envelope["payload"]).replace(b'"PASS"', b'"FAIL"')
    envelope["payload"] = base64.b64encode(payload).decode()
    members[bundle.ATTESTATION] = json.dumps(envelope).encode()
    _fails(_repack(written, members), keys, "signature does not match its statement")


def test_an_edited_signature_is_named(written: Path, keys: KeyPair) -> None:
    members = _members(written)
    envelope = json.loads(members[bundle.ATTESTATION])
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[-1] ^= 0x01
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    members[bundle.ATTESTATION] = json.dumps(envelope).encode()
    _fails(_repack(written, members), keys, "signature does not match")


def test_an_extra_file_is_named(written: Path, keys: KeyPair) -> None:
    members = {**_members(written), "logs/injected.log": b"hello"}
    _fails(_repack(written, members), keys,
           "extra file logs/injected.log: in neither the manifest nor the attestation")


def test_a_missing_file_is_named(written: Path, keys: KeyPair) -> None:
    members = _members(written)
    del members["chaos/zone-outage/journal.json"]
    _fails(_repack(written, members), keys, "missing file chaos/zone-outage/journal.json")


@pytest.mark.parametrize(("name", "message"), [
    (bundle.MANIFEST, "missing file SHA256SUMS (the manifest)"),
    (bundle.ATTESTATION, "missing file attestation.dsse.json (the signed attestation)"),
])
def test_a_missing_manifest_or_attestation_is_named(written: Path, keys: KeyPair, name: str,
                                                    message: str) -> None:
    members = _members(written)
    del members[name]
    _fails(_repack(written, members), keys, message)


def test_another_vendors_key_is_named(written: Path, other_keys: KeyPair) -> None:
    _fails(written, other_keys, "not by the given key")


def test_a_bundle_resigned_by_someone_else_is_refused(written: Path, keys: KeyPair,
                                                      other_keys: KeyPair) -> None:
    members = _members(written)
    members["certification.yaml"] = b"verdict: PASS\nvendor: mallory\n"
    contents: dict[str, Path | bytes] = {n: d for n, d in members.items()
                                         if n not in (bundle.MANIFEST, bundle.ATTESTATION)}
    forged = bundle.write(written.with_name("forged.tar.gz"), contents, PREDICATE,
                          attestation.load_signer(other_keys.private), mtime=1)
    assert _verify(forged, other_keys).verdict == "PASS"  # consistent in itself
    _fails(forged, keys, "not by the given key")


def test_links_and_escaping_paths_are_refused(written: Path, keys: KeyPair) -> None:
    def add_bad(tar: tarfile.TarFile) -> None:
        link = tarfile.TarInfo("logs/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
        escape = tarfile.TarInfo("../escape.txt")
        escape.size = 1
        tar.addfile(escape, io.BytesIO(b"x"))

    _fails(_repack(written, _members(written), add_bad), keys,
           "member 'logs/link': not a regular file", "member '../escape.txt'")


def test_a_duplicate_member_is_refused(written: Path, keys: KeyPair) -> None:
    members = _members(written)

    def again(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("summary.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))

    _fails(_repack(written, members, again), keys, "member 'summary.json' appears twice")


def test_not_a_bundle(tmp_path: Path, keys: KeyPair) -> None:
    path = tmp_path / "x.tar.gz"
    path.write_bytes(b"plain text")
    _fails(path, keys, "is not a readable .tar.gz bundle")


def test_reserved_and_unsafe_names_are_refused_when_writing(tmp_path: Path, keys: KeyPair) -> None:
    signer = attestation.load_signer(keys.private)
    with pytest.raises(errors.ConfigError, match="reserved"):
        bundle.write(tmp_path / "b.tar.gz", {bundle.MANIFEST: b""}, PREDICATE, signer, mtime=0)
    with pytest.raises(errors.ConfigError, match="not a plain relative path"):
        bundle.write(tmp_path / "b.tar.gz", {"../x": b""}, PREDICATE, signer, mtime=0)
    assert not (tmp_path / "b.tar.gz").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("zz  a\n", "line 1 is not"), (f"{'a' * 64}  x\n{'b' * 64}  x\n", "names 'x' twice")])
def test_a_malformed_manifest_is_named(text: str, message: str) -> None:
    with pytest.raises(errors.VerificationError, match=message):
        bundle.parse_manifest(text)
