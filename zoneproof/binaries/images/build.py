"""Build the components' images and their archive: debootstrap → pip → docker build → smoke → docker save.

Steps (the archive in the cache is the product: when it exists and matches its checksum,
nothing runs):

1. the Debian python root file system (``rootfs.rootfs_image``; skipped when its image exists);
2. its interpreter's Python version, glibc and machine, read by running it;
3. the pinned distributions installed by this environment's pip into a site directory, as
   wheels for that interpreter (``--python-version``/``--platform``: nothing is compiled), and
   zoneproof's sources copied next to them;
4. ``docker build --network none`` of the shared image and of one image per component, each
   tagged with the recipe hash and with ``DEFAULT_TAG`` (the name deploy/ uses);
5. a smoke run of each image as non-root with a read-only root file system and no network
   (imports and ``--help``), so a missing module fails the build, not a rollout;
6. ``docker save`` of the component images into ``<cache>/images/components-<hash>/``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from zoneproof import errors
from zoneproof._util import processes
from zoneproof.binaries import resolve, rootfs
from zoneproof.binaries.build import Progress
from zoneproof.binaries.images import recipe

__all__ = ["ImagesResult", "build_component_images", "cache_dir", "pip_install_argv",
           "recipe_for_machine", "wheel_platforms"]

_SMOKE_IMPORTS = ("import kubernetes.client, kubernetes.config, kubernetes.watch, yaml, urllib3; "
                  + "; ".join(f"import {module}.cli" for module in recipe.ENTRYPOINTS.values()))
_OLDEST_MANYLINUX_MINOR = 5
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


@dataclass(frozen=True, slots=True)
class ImagesResult:
    """The archive holding every component image, their names, and how the build went."""

    archive: Path
    #: (component, content-addressed image name), e.g. ("ha-controller", "localhost/…:<hash>")
    images: tuple[tuple[str, str], ...]
    built: bool
    seconds: float

    def ref(self, component: str) -> str:
        """The image name of ``component`` (``ha-config-webhook`` or ``ha-controller``)."""
        return dict(self.images)[component]

    @property
    def size_bytes(self) -> int:
        return self.archive.stat().st_size


def recipe_for_machine() -> recipe.Recipe:
    """The recipe for this machine's Debian mirror, this environment's distributions, this checkout."""
    suite, mirror = rootfs.debian_source()
    try:
        pins = recipe.requirement_closure(recipe.RUNTIME_DISTRIBUTIONS, requires=metadata.requires,
                                          version=metadata.version, skip=recipe.NOT_AT_RUNTIME)
    except metadata.PackageNotFoundError as exc:
        raise errors.BinaryError(
            f"distribution {exc} is not installed in this environment ({sys.prefix}), and the "
            "images take the versions installed here: run `make setup` (or `pip install -e .`)"
        ) from exc
    return recipe.Recipe(suite, mirror, tuple(pins.items()), recipe.sources_digest())


def cache_dir(r: recipe.Recipe) -> Path:
    """``<cache>/images/components-<hash>/`` (the archive and its SHA256SUMS.json)."""
    return resolve.cache_root() / "images" / f"components-{r.hash}"


def wheel_platforms(glibc: tuple[int, int], machine: str) -> list[str]:
    """pip ``--platform`` tags a glibc ``major.minor`` on ``machine`` runs, newest first."""
    major, minor = glibc
    if major != 2:
        raise errors.BinaryError(f"the image's glibc {major}.{minor} is not a 2.x: no manylinux tags")
    tags = []
    for m in range(minor, _OLDEST_MANYLINUX_MINOR - 1, -1):
        tags.append(f"manylinux_2_{m}_{machine}")
        if m in _LEGACY_MANYLINUX:
            tags.append(f"{_LEGACY_MANYLINUX[m]}_{machine}")
    return tags


def pip_install_argv(pins: list[str], target: Path, python: tuple[int, int],
                     platforms: list[str]) -> list[str]:
    """This environment's pip installing ``pins`` as wheels for another interpreter into ``target``."""
    version = f"{python[0]}.{python[1]}"
    argv = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile",
            "--only-binary=:all:", "--disable-pip-version-check", "--no-warn-script-location",
            "--target", str(target), "--python-version", version, "--implementation", "cp",
            "--abi", f"cp{python[0]}{python[1]}"]
    for platform in platforms:
        argv += ["--platform", platform]
    return [*argv, *pins]


def _interpreter(docker: list[str], image: str) -> tuple[tuple[int, int], tuple[int, int], str]:
    """(Python major.minor, glibc major.minor, machine) of ``python3`` in ``image``."""
    script = ("import platform, sys; print(sys.version_info[0], sys.version_info[1], "
              "*platform.libc_ver()[1].split('.')[:2], platform.machine())")
    out = processes.run([*docker, "run", "--rm", "--network", "none", "--entrypoint", "python3",
                         image, "-c", script]).split()
    if len(out) != 5:
        raise errors.BinaryError(f"cannot read python3's version and glibc in {image}: {out}")
    return (int(out[0]), int(out[1])), (int(out[2]), int(out[3])), out[4]


def _site(docker: list[str], r: recipe.Recipe, site: Path, log: Path, progress: Progress) -> None:
    python, glibc, machine = _interpreter(docker, r.base_ref)
    progress(f"  pip: {len(r.pins)} distributions for CPython {python[0]}.{python[1]}, glibc "
             f"{glibc[0]}.{glibc[1]}, {machine} (log: {log})")
    try:
        processes.run([*rootfs.NICE, *pip_install_argv(r.pins, site, python,
                                                        wheel_platforms(glibc, machine))],
                      log_file=log)
    except processes.CommandError as exc:
        raise errors.BinaryError(
            f"pip could not install the components' distributions ({', '.join(r.pins)}) as "
            f"wheels for CPython {python[0]}.{python[1]} on {machine}: it needs the package index "
            f"(or its cache); see {log}") from exc
    for unused in ("bin", *recipe.SITE_PRUNE):  # bin: console scripts no component runs
        shutil.rmtree(site / unused, ignore_errors=True)
    for path in recipe.zoneproof_files():
        dest = site / "zoneproof" / path.relative_to(recipe.PACKAGE_ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)


def _images(docker: list[str], r: recipe.Recipe, work: Path, progress: Progress) -> None:
    context = work / "components"
    (context / "site").mkdir(parents=True)
    _site(docker, r, context / "site", work / "pip.log", progress)
    (context / "Dockerfile").write_text(recipe.components_dockerfile(r.base_ref))
    progress(f"  docker build {r.components_ref}")
    rootfs.docker_build(docker, context, r.components_ref, f"io.zoneproof.images={r.hash}")
    for component in recipe.REPOSITORIES:
        entry = work / component
        entry.mkdir()
        (entry / "Dockerfile").write_text(recipe.entry_dockerfile(r.components_ref, component))
        progress(f"  docker build {r.ref(component)}")
        rootfs.docker_build(docker, entry, r.ref(component))
        processes.run([*docker, "tag", r.ref(component), r.ref(component, recipe.DEFAULT_TAG)])


def _smoke(docker: list[str], r: recipe.Recipe, progress: Progress) -> None:
    """Each image imports what it runs and answers --help: non-root, read-only, no network."""
    confined = [*docker, "run", "--rm", "--network", "none", "--read-only", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges"]
    for component, ref in r.refs.items():
        try:
            processes.run([*confined, "--entrypoint", "python3", ref, "-c", _SMOKE_IMPORTS])
            processes.run([*confined, ref, "--help"])
        except processes.CommandError as exc:
            raise errors.BinaryError(
                f"image {ref} ({component}) does not start as non-root with a read-only root "
                f"file system: {exc}; a module it imports is probably missing from "
                "ZONEPROOF_SOURCES or RUNTIME_DISTRIBUTIONS (zoneproof/binaries/images/recipe.py)"
            ) from exc
    progress("  smoke: every image imports its modules and answers --help (read-only, no network)")


def _save(docker: list[str], r: recipe.Recipe, target: Path, progress: Progress) -> None:
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    names = [name for c in recipe.REPOSITORIES
             for name in (r.ref(c), r.ref(c, recipe.DEFAULT_TAG))]
    progress(f"  docker save {' '.join(names)}")
    processes.run([*docker, "save", "-o", str(staging / recipe.ARCHIVE), *names])
    (staging / resolve.MANIFEST).write_text(
        f'{{"{recipe.ARCHIVE}": "{resolve.sha256_of(staging / recipe.ARCHIVE)}"}}\n')
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def build_component_images(*, force: bool = False, progress: Progress = print) -> ImagesResult:
    """Make (or find in the cache) the archive of the reference components' images."""
    start = time.monotonic()
    r = recipe_for_machine()
    target = cache_dir(r)
    images = tuple(r.refs.items())
    if not force and resolve.verify_cached(target, [recipe.ARCHIVE]):
        progress(f"component images {r.hash}: cached ({target / recipe.ARCHIVE})")
        return ImagesResult(target / recipe.ARCHIVE, images, False, time.monotonic() - start)
    docker = rootfs.docker_argv()
    progress(f"building component images {r.hash} (Debian {r.suite} python3, "
             f"{len(r.pins)} Python distributions, zoneproof {recipe.DEFAULT_TAG})")
    work_root = resolve.cache_root() / "images" / "work"
    work_root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{r.hash}-", dir=work_root))
    try:
        rootfs.rootfs_image(docker, r.suite, r.mirror, r.base_ref, recipe.PACKAGES, work=work,
                            progress=progress, prune=recipe.PRUNE)
        _images(docker, r, work, progress)
        _smoke(docker, r, progress)
        _save(docker, r, target, progress)
    finally:
        rootfs.remove_rootfs(work)
    seconds = time.monotonic() - start
    result = ImagesResult(target / recipe.ARCHIVE, images, True, seconds)
    progress(f"component images {r.hash}: built in {seconds:.0f}s, archive "
             f"{result.size_bytes / 2**20:.0f} MiB")
    return result
