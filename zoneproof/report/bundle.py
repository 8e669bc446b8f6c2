"""The certification bundle: a ``.tar.gz`` of evidence, a SHA-256 manifest and a signed attestation.

``write`` packs the given files (name → a file on disk, or bytes), adds ``SHA256SUMS``
(``sha256sum -c`` format: every file but itself and the attestation) and
``attestation.dsse.json`` (an in-toto Statement whose subjects are every other file,
the manifest included, in a DSSE envelope signed with the vendor's key). ``verify``
reads a bundle without extracting it and names every discrepancy: a file whose bytes
differ from the manifest or the attestation, a file extra or missing, a manifest or a
statement that was edited, a signature that does not match or was made by another key.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from securesystemslib.signer import CryptoSigner, SSlibKey

from zoneproof import errors
from zoneproof.report import attestation

__all__ = ["ATTESTATION", "MANIFEST", "Contents", "Verified", "manifest_text", "parse_manifest",
           "verify", "write"]

MANIFEST = "SHA256SUMS"
ATTESTATION = "attestation.dsse.json"
Contents = Mapping[str, Path | bytes]
"""Bundle file name (relative, ``/``-separated) → a file to copy, or the bytes to write."""
_CHUNK = 1 << 20


def _sha256_stream(stream: IO[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(_CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _sha256(source: Path | bytes) -> str:
    if isinstance(source, bytes):
        return hashlib.sha256(source).hexdigest()
    with source.open("rb") as f:
        return _sha256_stream(f)


def _check_name(name: str) -> str | None:
    """Why ``name`` cannot be a bundle member (None: it can)."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or str(path) != name:
        return f"{name!r} is not a plain relative path"
    return None


def manifest_text(digests: Mapping[str, str]) -> str:
    """``SHA256SUMS``: one ``<sha256>  <name>`` line per file, sorted by name."""
    return "".join(f"{digest}  {name}\n" for name, digest in sorted(digests.items()))


def parse_manifest(text: str) -> dict[str, str]:
    """Name → SHA-256 of a ``SHA256SUMS``; VerificationError names a malformed line."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise errors.VerificationError(f"{MANIFEST} line {number} is not '<sha256>  <name>': "
                                           f"{line[:120]!r}")
        if name in out:
            raise errors.VerificationError(f"{MANIFEST} names {name!r} twice")
        out[name] = digest
    return out


def _add(tar: tarfile.TarFile, name: str, source: Path | bytes, mtime: int) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.mode, info.uname, info.gname = mtime, 0o644, "", ""
    if isinstance(source, bytes):
        info.size = len(source)
        tar.addfile(info, io.BytesIO(source))
        return
    info.size = source.stat().st_size
    with source.open("rb") as f:
        tar.addfile(info, f)


def write(output: Path, contents: Contents, predicate: Mapping[str, Any], signer: CryptoSigner,
          *, mtime: int) -> Path:
    """Pack ``contents`` with their manifest and signed attestation into ``output`` (.tar.gz).

    Deterministic for the same inputs (sorted members, fixed owner, mode and ``mtime``).
    """
    reserved = sorted({MANIFEST, ATTESTATION} & set(contents))
    bad = [why for name in contents if (why := _check_name(name))]
    if reserved or bad:
        raise errors.ConfigError(f"bundle contents: {', '.join(bad + reserved)} (reserved: "
                                 f"{MANIFEST}, {ATTESTATION})")
    digests = {name: _sha256(source) for name, source in contents.items()}
    manifest = manifest_text(digests).encode()
    payload = attestation.statement({**digests, MANIFEST: _sha256(manifest)}, predicate)
    envelope = attestation.sign(payload, signer)
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    with partial.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(contents):
            _add(tar, name, contents[name], mtime)
        _add(tar, MANIFEST, manifest, mtime)
        _add(tar, ATTESTATION, envelope, mtime)
    partial.replace(output)
    return output


@dataclass(frozen=True, slots=True)
class Verified:
    """A bundle that verified: its files, the key that signed it, the attested result."""

    files: int
    keyid: str
    predicate: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """The attested verdict (PASS or FAIL)."""
        return str(self.predicate.get("verdict", "UNKNOWN"))


def _read_members(bundle: Path) -> tuple[dict[str, str], dict[str, bytes], list[str]]:
    """(name → sha256 of every regular member, the manifest's and attestation's bytes, problems)."""
    digests: dict[str, str] = {}
    kept: dict[str, bytes] = {}
    problems: list[str] = []
    try:
        with tarfile.open(bundle, mode="r:gz") as tar:
            for member in tar:
                if (why := _check_name(member.name)) or not member.isfile():
                    problems.append(f"member {member.name!r}: {why or 'not a regular file'}")
                    continue
                if member.name in digests:
                    problems.append(f"member {member.name!r} appears twice")
                    continue
                stream = tar.extractfile(member)
                assert stream is not None  # a regular file
                if member.name in (MANIFEST, ATTESTATION):
                    kept[member.name] = stream.read()
                    digests[member.name] = hashlib.sha256(kept[member.name]).hexdigest()
                else:
                    digests[member.name] = _sha256_stream(stream)
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise errors.VerificationError(f"{bundle} is not a readable .tar.gz bundle: {exc}") from None
    return digests, kept, problems


def _short(digest: str) -> str:
    return digest[:16] + "…"


def _compare(files: Mapping[str, str], manifest: Mapping[str, str],
             subjects: Mapping[str, str] | None) -> list[str]:
    """Every file whose digest disagrees with the manifest or the attested subjects."""
    problems = []
    listed = set(manifest) | ({n for n in subjects if n != MANIFEST} if subjects else set())
    for name in sorted(set(files) - {MANIFEST, ATTESTATION} - listed):
        problems.append(f"extra file {name}: in neither the manifest nor the attestation")
    for name in sorted(listed - set(files)):
        problems.append(f"missing file {name}: named by the "
                        f"{'manifest' if name in manifest else 'attestation'} but not in the bundle")
    for name in sorted(listed & set(files)):
        actual, in_manifest = files[name], manifest.get(name)
        in_statement = subjects.get(name) if subjects is not None else None
        if in_manifest is None:
            problems.append(f"{name}: not in the manifest ({MANIFEST})")
        if subjects is not None and in_statement is None:
            problems.append(f"{name}: not a subject of the attestation")
        wrong = [f"the {what} says {_short(d)}" for what, d in
                 (("manifest", in_manifest), ("attestation", in_statement))
                 if d is not None and d != actual]
        if wrong:
            problems.append(f"{name}: altered (sha256 {_short(actual)}, but {' and '.join(wrong)})")
    if subjects is not None and MANIFEST in files:
        if MANIFEST not in subjects:
            problems.append(f"{MANIFEST}: not a subject of the attestation")
        elif subjects[MANIFEST] != files[MANIFEST]:
            problems.append(f"{MANIFEST}: altered (sha256 {_short(files[MANIFEST])}, but the "
                            f"attestation says {_short(subjects[MANIFEST])})")
    return problems


def verify(bundle: Path, key: SSlibKey) -> Verified:
    """Check ``bundle`` against ``key``: every digest against the manifest and the attestation,
    the signature, nothing extra or missing. VerificationError lists every problem found."""
    files, kept, problems = _read_members(bundle)
    manifest: dict[str, str] = {}
    if MANIFEST not in kept:
        problems.append(f"missing file {MANIFEST} (the manifest)")
    else:
        try:
            manifest = parse_manifest(kept[MANIFEST].decode("utf-8", errors="replace"))
        except errors.VerificationError as exc:
            problems.append(str(exc))
    attested: attestation.Attested | None = None
    if ATTESTATION not in kept:
        problems.append(f"missing file {ATTESTATION} (the signed attestation)")
    else:
        try:
            attested = attestation.open_envelope(kept[ATTESTATION], key)
        except errors.VerificationError as exc:
            problems.append(str(exc))
    problems += _compare(files, manifest, attested.subjects if attested else None)
    if problems or attested is None:
        raise errors.VerificationError("\n".join(problems))
    return Verified(len(files), attested.keyid, attested.predicate)
