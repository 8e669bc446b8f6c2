"""Docker images from Debian root file systems, with no registry: debootstrap → ``docker import``.

The one place for what every offline image build shares (the kind node image, the
components' images): the docker CLI and its daemon, the machine's Debian mirror,
debootstrap into a directory (root), importing that directory as an image, and
``docker build`` with no network. Temporary root file systems are unmounted and removed
on success, failure and Ctrl-C.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from zoneproof import errors
from zoneproof._util import processes
from zoneproof.binaries.build import Progress

__all__ = [
    "NICE",
    "debian_source",
    "debootstrap",
    "docker_argv",
    "docker_build",
    "image_exists",
    "image_label",
    "import_rootfs",
    "remove_rootfs",
    "rootfs_image",
]

#: Image builds yield the CPU to the test beds that share the machine.
NICE = ["nice", "-n", "10"]
_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))
#: What debootstrap leaves behind that no image needs (package caches and lists).
_JUNK = ("var/cache/apt/archives", "var/lib/apt/lists")


def docker_argv() -> list[str]:
    """``docker`` if a daemon answers; else a BackendError naming the fix."""
    docker = shutil.which("docker")
    if docker is None:
        raise errors.BackendError(
            "docker is not installed: run `sudo scripts/setup-docker.sh` (Debian's docker.io), "
            "or install Docker Engine")
    try:
        processes.run([docker, "info", "--format", "{{.ServerVersion}}"], timeout_s=30)
    except (processes.CommandError, subprocess.TimeoutExpired) as exc:
        raise errors.BackendError(
            "docker is installed but its daemon does not answer (`docker info` failed): start it "
            "with `sudo scripts/setup-docker.sh` (or `systemctl start docker`)") from exc
    return [docker]


def image_exists(docker: list[str], ref: str) -> bool:
    """True if the local docker daemon has an image named ``ref``."""
    try:
        processes.run([*docker, "image", "inspect", "--format", "{{.Id}}", ref])
    except processes.CommandError:
        return False
    return True


def image_label(docker: list[str], ref: str, key: str) -> str | None:
    """The value of label ``key`` on image ``ref``; None if the image or the label is absent."""
    try:
        out = processes.run([*docker, "image", "inspect", "--format",
                             f'{{{{index .Config.Labels "{key}"}}}}', ref]).strip()
    except processes.CommandError:
        return None
    return out if out and out != "<no value>" else None


def debian_source() -> tuple[str, str]:
    """(suite, mirror URL) of this machine's first configured Debian ``main`` source."""
    for path in _SOURCES:
        if not path.is_file():
            continue
        text = path.read_text()
        uris = re.search(r"^URIs:\s*(\S+)", text, re.MULTILINE)
        suites = re.search(r"^Suites:\s*(\S+)", text, re.MULTILINE)
        if uris and suites:
            return suites.group(1), uris.group(1)
        line = re.search(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+main", text, re.MULTILINE)
        if line:
            return line.group(2), line.group(1)
    raise errors.BinaryError(
        "no Debian mirror configured in /etc/apt/sources.list(.d): offline images' root file "
        "systems come from debootstrap; configure a Debian source")


def debootstrap(suite: str, mirror: str, packages: tuple[str, ...], target: Path,
                progress: Progress, *, prune: tuple[str, ...] = ()) -> None:
    """``debootstrap --variant=minbase --include=packages`` into ``target`` (root).

    Package caches go; so does every directory under ``prune`` (paths relative to the root,
    e.g. ``usr/share/doc``), for images that need no documentation.
    """
    if shutil.which("debootstrap") is None:
        raise errors.BinaryError(
            "debootstrap is not installed: `apt-get install debootstrap` (scripts/setup-docker.sh "
            "installs it)")
    if os.geteuid() != 0:
        raise errors.BinaryError("debootstrap needs root: run `zoneproof build` with sudo for "
                                 "images built from a Debian root file system")
    log_file = target.parent / f"{target.name}.debootstrap.log"
    progress(f"  debootstrap {suite} ({len(packages)} packages) from {mirror} (log: {log_file})")
    start = time.monotonic()
    processes.run([*NICE, "debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
                   suite, str(target), mirror], log_file=log_file)
    for junk in _JUNK:
        for path in (target / junk).glob("*"):
            if path.is_file():
                path.unlink()
    for directory in prune:
        shutil.rmtree(target / directory, ignore_errors=True)
    progress(f"  debootstrap {suite}: done in {time.monotonic() - start:.0f}s")


def _mounts_under(path: Path) -> list[str]:
    prefix = str(path.resolve()) + "/"
    points = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    return sorted((p for p in points if p.startswith(prefix)), reverse=True)


def remove_rootfs(target: Path) -> None:
    """Delete a debootstrap target, first unmounting what debootstrap mounted in it.

    debootstrap mounts /proc, /sys and may bind-mount the host's /dev into the target; if it
    was killed (Ctrl-C), those stay, and deleting through them would delete the host's files.
    """
    for point in _mounts_under(target):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)
    if left := _mounts_under(target):
        raise errors.BinaryError(
            f"{target} still has mounts ({', '.join(left)}): unmount them, then delete {target}")
    shutil.rmtree(target, ignore_errors=True)


def import_rootfs(docker: list[str], rootfs: Path, ref: str, changes: list[str]) -> None:
    """``tar`` the directory into ``docker import`` as image ``ref`` (``--change`` each of changes)."""
    argv = [*docker, "import"]
    for change in changes:
        argv += ["--change", change]
    tar = subprocess.Popen([*NICE, "tar", "-C", str(rootfs), "--numeric-owner", "-c", "."],
                           stdout=subprocess.PIPE)
    try:
        proc = subprocess.run([*argv, "-", ref], stdin=tar.stdout, capture_output=True, text=True,
                              check=False)
    finally:
        if tar.stdout is not None:
            tar.stdout.close()
        tar.wait()
    if proc.returncode != 0 or tar.returncode != 0:
        raise errors.BinaryError(f"docker import of {rootfs} as {ref} failed: {proc.stderr.strip()}")


def rootfs_image(docker: list[str], suite: str, mirror: str, ref: str, packages: tuple[str, ...],
                 *, work: Path, progress: Progress, prune: tuple[str, ...] = ()) -> None:
    """Image ``ref`` from a fresh debootstrap of ``packages`` (skipped when ``ref`` exists)."""
    if image_exists(docker, ref):
        progress(f"  {ref}: cached")
        return
    target = work / f"rootfs-{ref.rsplit('/', 1)[-1].replace(':', '-')}"
    remove_rootfs(target)
    try:
        debootstrap(suite, mirror, packages, target, progress, prune=prune)
        import_rootfs(docker, target, ref, [])
    finally:
        remove_rootfs(target)
    progress(f"  imported {ref}")


def docker_build(docker: list[str], context: Path, ref: str, *labels: str) -> None:
    """``docker build --network none`` of ``context`` as ``ref`` (log: ``context/build.log``)."""
    argv = [*NICE, *docker, "build", "--network", "none", "-q", "-t", ref]
    for label in labels:
        argv += ["--label", label]
    processes.run([*argv, str(context)], log_file=context / "build.log")
