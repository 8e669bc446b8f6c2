"""Find each upstream binary: explicit path → ZONEPROOF_BIN_DIR → verified cache → build."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import filelock

from zoneproof import errors
from zoneproof.binaries import build
from zoneproof.binaries.pins import BINARIES, PINS, Pins

__all__ = ["MANIFEST", "Binaries", "cache_root", "env_var", "resolve", "resolve_all", "sha256_of",
           "verify_cached"]

MANIFEST = "SHA256SUMS.json"


@dataclass(frozen=True, slots=True)
class Binaries:
    """Absolute paths of every binary the local test bed runs, plus kwok's Stage files."""

    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    etcd: Path
    kwok: Path
    kwok_stages: tuple[Path, ...]
    pins: Pins

    def path(self, name: str) -> Path:
        """The path of binary ``name`` (e.g. ``kube-apiserver``)."""
        path: Path = getattr(self, name.replace("-", "_"))
        return path


def cache_root() -> Path:
    """``$ZONEPROOF_CACHE``, else ``$XDG_CACHE_HOME/zoneproof``, else ``~/.cache/zoneproof``."""
    if explicit := os.environ.get("ZONEPROOF_CACHE"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zoneproof"


def env_var(binary: str) -> str:
    """The variable that names an explicit path for ``binary``: ``ZONEPROOF_KUBE_APISERVER``."""
    return "ZONEPROOF_" + binary.upper().replace("-", "_")


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _project_dir(root: Path, project: str, version: str) -> Path:
    digest = build.source_digest(project)
    return root / "bin" / (f"{project}-{version}" + (f"-{digest}" if digest else ""))


def _names_of(project: str) -> list[str]:
    return [b for b, p in BINARIES.items() if p == project]


def verify_cached(project_dir: Path, names: list[str]) -> bool:
    """True if ``project_dir`` holds a complete build; raises if a binary there is corrupt.

    A directory without the manifest is an interrupted build (not an error): rebuild. The
    binaries are hashed once per process while none of them (nor the manifest) changes.
    """
    manifest = project_dir / MANIFEST
    if not manifest.is_file():
        return False
    files = [manifest, *(project_dir / name for name in names)]
    stamp = tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.is_file() else None
                  for f in files)
    return _verified(project_dir, tuple(names), stamp)


@functools.lru_cache(maxsize=64)
def _verified(project_dir: Path, names: tuple[str, ...],
              stamp: tuple[tuple[int, int] | None, ...]) -> bool:
    """``verify_cached``'s hashing, for one state of the files (``stamp``)."""
    manifest = project_dir / MANIFEST
    try:
        sums: dict[str, str] = json.loads(manifest.read_text())
    except json.JSONDecodeError as exc:
        raise errors.BinaryError(
            f"cache manifest {manifest} is unreadable ({exc}): delete {project_dir} and run "
            "`zoneproof build`") from exc
    for name in names:
        path = project_dir / name
        if not path.is_file() or sums.get(name) != sha256_of(path):
            raise errors.BinaryError(
                f"cached binary {path} is missing or corrupt (sha256 differs from {manifest}): "
                f"run `zoneproof build --force` (or delete {project_dir}) to rebuild it")
    return True


def _writable(root: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root):
            pass
    except OSError as exc:
        raise errors.BinaryError(
            f"cache directory {root} is not writable ({exc.strerror}): set ZONEPROOF_CACHE "
            "to a writable directory, or fix its permissions") from exc


def _ensure_project(project: str, version: str, root: Path, *, force: bool,
                    progress: build.Progress) -> Path:
    target = _project_dir(root, project, version)
    names = _names_of(project)
    if not force and verify_cached(target, names):
        return target
    _writable(root)
    (root / "work").mkdir(exist_ok=True)
    with filelock.FileLock(str(root / "work" / f"{project}-{version}.lock")):
        if not force and verify_cached(target, names):  # built meanwhile by another process
            return target
        return _build_into(project, version, root, target, progress=progress)


def _build_into(project: str, version: str, root: Path, target: Path, *,
                progress: build.Progress) -> Path:
    names = _names_of(project)
    progress(f"building {project} {version} from its Go modules (takes minutes on a cold cache)")
    start = time.monotonic()
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    build.build_project(project, version, root / "work" / f"{project}-{version}", staging, progress)
    sums = {name: sha256_of(staging / name) for name in names}
    (staging / MANIFEST).write_text(json.dumps(sums, indent=2))
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    progress(f"built {project} {version} in {time.monotonic() - start:.0f}s → {target}")
    return target


def _explicit(name: str) -> Path | None:
    if value := os.environ.get(env_var(name)):
        path = Path(value).expanduser()
        source = env_var(name)
    elif bin_dir := os.environ.get("ZONEPROOF_BIN_DIR"):
        path = Path(bin_dir).expanduser() / name
        source = "ZONEPROOF_BIN_DIR"
    else:
        return None
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise errors.BinaryError(
            f"{source} points at {path}, which is not an executable file: fix the variable "
            f"or unset it to use the cache/build")
    return path.resolve()


def resolve(name: str, pins: Pins = PINS, *, build_missing: bool = True, force: bool = False,
            progress: build.Progress = print) -> Path:
    """One binary (``kind``, ``kubelet``, …): ``ZONEPROOF_<NAME>`` → ``ZONEPROOF_BIN_DIR`` → cache → build."""
    if name not in BINARIES:
        raise errors.BinaryError(f"unknown binary {name!r}: known are {', '.join(sorted(BINARIES))}")
    if not force and (explicit := _explicit(name)) is not None:
        return explicit
    project = BINARIES[name]
    version = pins.version_of(project)
    root = cache_root()
    cached = _project_dir(root, project, version)
    if not build_missing and not force:
        if not verify_cached(cached, _names_of(project)):
            raise errors.BinaryError(
                f"{name} ({project} {version}) is not in the cache ({cached}): run `zoneproof "
                f"build --node-image`, or set {env_var(name)} / ZONEPROOF_BIN_DIR")
        return cached / name
    return _ensure_project(project, version, root, force=force, progress=progress) / name


def resolve_all(pins: Pins = PINS, *, build_missing: bool = True, force: bool = False,
                progress: build.Progress = print) -> Binaries:
    """Every binary of the test bed, building missing ones unless ``build_missing`` is False."""
    root = cache_root()
    paths: dict[str, Path] = {}
    stages_dir: Path | None = None
    for project in ("etcd", "kwok", "kubernetes"):
        version = pins.version_of(project)
        names = _names_of(project)
        explicit = {n: p for n in names if (p := _explicit(n)) is not None}
        needs_cache = len(explicit) < len(names) or project == "kwok"
        if needs_cache:
            cached = _project_dir(root, project, version)
            if not build_missing and not verify_cached(cached, names):
                raise errors.BinaryError(
                    f"{project} {version} is not in the cache ({cached}): run `zoneproof build`")
            if build_missing or force:
                cached = _ensure_project(project, version, root, force=force, progress=progress)
            for name in names:
                paths[name] = explicit.get(name, cached / name)
            if project == "kwok":
                stages_dir = cached / "stages"
        else:
            paths.update(explicit)
    assert stages_dir is not None
    stages = tuple(stages_dir / Path(rel).name for rel in build.KWOK_STAGES)
    return Binaries(
        kube_apiserver=paths["kube-apiserver"],
        kube_controller_manager=paths["kube-controller-manager"],
        kube_scheduler=paths["kube-scheduler"],
        etcd=paths["etcd"],
        kwok=paths["kwok"],
        kwok_stages=stages,
        pins=pins,
    )
