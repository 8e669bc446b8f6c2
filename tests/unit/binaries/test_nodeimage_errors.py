"""The node image build names the fix when docker or debootstrap is missing or docker is down."""

import shutil
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.binaries import rootfs
from zoneproof.binaries.nodeimage import recipe as recipe_


def test_docker_missing_names_the_setup_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rootfs.shutil, "which", lambda name: None)
    with pytest.raises(errors.BackendError, match=r"not installed: run `sudo scripts/setup-docker.sh`"):
        rootfs.docker_argv()


@pytest.mark.skipif(shutil.which("docker") is None, reason="needs the docker CLI")
def test_docker_daemon_down_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    with pytest.raises(errors.BackendError, match="daemon does not answer.*setup-docker.sh"):
        rootfs.docker_argv()


def test_debootstrap_missing_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rootfs.shutil, "which", lambda name: None)
    with pytest.raises(errors.BinaryError, match="apt-get install debootstrap"):
        rootfs.debootstrap("bookworm", "http://deb.example", recipe_.SLIM_PACKAGES,
                           tmp_path / "rootfs", print)
