"""Binary resolution: explicit paths, cache verification, and the errors that name the fix."""

import json
import threading
import time
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.binaries import BINARIES, PINS, build, resolve
from zoneproof.binaries.build import KWOK_STAGES


def _fake_cache(root: Path) -> None:
    """A cache with tiny stand-in binaries and valid manifests."""
    for project in ("kubernetes", "etcd", "kwok"):
        d = root / "bin" / f"{project}-{PINS.version_of(project)}"
        d.mkdir(parents=True)
        sums = {}
        for name in [b for b, p in BINARIES.items() if p == project]:
            (d / name).write_text(f"#!/bin/sh\necho {name}\n")
            (d / name).chmod(0o755)
            sums[name] = resolve.sha256_of(d / name)
        (d / resolve.MANIFEST).write_text(json.dumps(sums))
    stages = root / "bin" / f"kwok-{PINS.kwok}" / "stages"
    stages.mkdir()
    for rel in KWOK_STAGES:
        (stages / Path(rel).name).write_text("kind: Stage\n")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ZONEPROOF_CACHE", str(root))
    for name in BINARIES:
        monkeypatch.delenv(resolve.env_var(name), raising=False)
    monkeypatch.delenv("ZONEPROOF_BIN_DIR", raising=False)
    return root


def test_verified_cache_is_used_without_building(cache: Path) -> None:
    _fake_cache(cache)
    found = resolve.resolve_all(build_missing=False)
    assert found.kube_apiserver == cache / "bin" / f"kubernetes-{PINS.kubernetes}" / "kube-apiserver"
    assert all(s.is_file() for s in found.kwok_stages)


def test_explicit_variable_wins(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_cache(cache)
    mine = tmp_path / "my-etcd"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)
    monkeypatch.setenv("ZONEPROOF_ETCD", str(mine))
    assert resolve.resolve_all(build_missing=False).etcd == mine


def test_explicit_variable_to_missing_file_names_the_variable(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_ETCD", "/nonexistent/etcd")
    with pytest.raises(errors.BinaryError, match="ZONEPROOF_ETCD"):
        resolve.resolve_all(build_missing=False)


def test_corrupt_cached_binary_names_the_fix(cache: Path) -> None:
    _fake_cache(cache)
    victim = cache / "bin" / f"kubernetes-{PINS.kubernetes}" / "kube-scheduler"
    victim.write_text("garbage")
    with pytest.raises(errors.BinaryError, match=r"corrupt.*zoneproof build --force"):
        resolve.resolve_all()


def test_interrupted_build_without_manifest_is_not_trusted(cache: Path) -> None:
    _fake_cache(cache)
    (cache / "bin" / f"etcd-{PINS.etcd}" / resolve.MANIFEST).unlink()
    with pytest.raises(errors.BinaryError, match="not in the cache"):
        resolve.resolve_all(build_missing=False)


def test_missing_go_names_the_fix(cache: Path, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(errors.BinaryError, match=r"`go` is not on PATH.*ZONEPROOF_BIN_DIR"):
        resolve.resolve_all(progress=lambda _: None)


def test_unwritable_cache_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_CACHE", "/etc/hostname/zoneproof")  # below a file
    with pytest.raises(errors.BinaryError, match=r"not writable.*ZONEPROOF_CACHE"):
        resolve.resolve_all(progress=lambda _: None)


def test_cache_root_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ZONEPROOF_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert resolve.cache_root() == tmp_path / "zoneproof"


def test_single_binary_from_its_env_var(cache: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    kind = tmp_path / "kind"
    kind.write_text("#!/bin/sh\n")
    kind.chmod(0o755)
    monkeypatch.setenv("ZONEPROOF_KIND", str(kind))
    assert resolve.resolve("kind", build_missing=False) == kind.resolve()


def test_single_binary_from_bin_dir(cache: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kubelet").write_text("#!/bin/sh\n")
    (tmp_path / "kubelet").chmod(0o755)
    monkeypatch.setenv("ZONEPROOF_BIN_DIR", str(tmp_path))
    assert resolve.resolve("kubelet", build_missing=False) == (tmp_path / "kubelet").resolve()


def test_single_binary_not_cached_names_the_fix(cache: Path) -> None:
    with pytest.raises(errors.BinaryError, match="zoneproof build --node-image"):
        resolve.resolve("kind", build_missing=False)


def test_unknown_binary_lists_the_known_ones(cache: Path) -> None:
    with pytest.raises(errors.BinaryError, match="known are .*kind"):
        resolve.resolve("kindd", build_missing=False)


def test_node_binaries_share_the_kubernetes_pin() -> None:
    assert PINS.version_of("kubernetes-node") == PINS.kubernetes
    assert PINS.version_of("local-path-provisioner") == PINS.local_path_provisioner


def test_a_binary_with_its_own_go_logic_is_cached_by_a_digest_of_its_sources(
        cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """porcupine-check holds zoneproof's register model: a changed model must not reuse a
    binary built from the old one, though the porcupine pin is the same."""
    digest = build.source_digest("porcupine")
    assert len(digest) == 12 and build.source_digest("etcd") == ""
    target = cache / "bin" / f"porcupine-{PINS.porcupine}-{digest}"
    target.mkdir(parents=True)
    (target / "porcupine-check").write_text("#!/bin/sh\n")
    (target / "porcupine-check").chmod(0o755)
    (target / resolve.MANIFEST).write_text(json.dumps(
        {"porcupine-check": resolve.sha256_of(target / "porcupine-check")}))
    assert resolve.resolve("porcupine-check", build_missing=False) == target / "porcupine-check"
    sources = tmp_path / "gobuild"
    (sources / "porcupine").mkdir(parents=True)
    (sources / "porcupine" / "model.go").write_text("package main // changed\n")
    monkeypatch.setattr(build, "_GOBUILD_DIR", sources)
    assert build.source_digest("porcupine") != digest
    with pytest.raises(errors.BinaryError, match="not in the cache"):
        resolve.resolve("porcupine-check", build_missing=False)


def test_concurrent_resolutions_build_a_missing_project_once(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two xdist workers needing porcupine-check at once: one builds, the other waits."""
    builds: list[str] = []

    def fake_build(project: str, version: str, work: Path, out: Path, progress: object) -> None:
        builds.append(project)
        time.sleep(0.3)
        out.mkdir(parents=True, exist_ok=True)
        (out / "porcupine-check").write_text("#!/bin/sh\n")
        (out / "porcupine-check").chmod(0o755)

    monkeypatch.setattr(build, "build_project", fake_build)
    found: list[Path] = []
    threads = [threading.Thread(target=lambda: found.append(
        resolve.resolve("porcupine-check", progress=lambda _: None))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == ["porcupine"] and len(found) == 2 and found[0] == found[1]
