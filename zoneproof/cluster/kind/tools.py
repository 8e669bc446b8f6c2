"""Where the kind backend finds the ``kind`` binary and the offline node image."""

from __future__ import annotations

import os
from pathlib import Path

from zoneproof.binaries import PINS, nodeimage, rootfs
from zoneproof.binaries import resolve as resolve_
from zoneproof.binaries.pins import KIND_UPSTREAM_IMAGES
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.kind import docker

__all__ = ["IMAGE_ENV", "LOAD_BALANCER_IMAGE", "kind_binary", "kind_env", "node_image"]

IMAGE_ENV = "ZONEPROOF_KIND_IMAGE"
#: The image kind runs in front of several control-plane nodes (never pulled here).
LOAD_BALANCER_IMAGE = KIND_UPSTREAM_IMAGES["loadbalancer"]


def kind_binary(progress: Progress = print) -> Path:
    """The pinned kind: ``ZONEPROOF_KIND`` → ``ZONEPROOF_BIN_DIR`` → cache → ``go`` build."""
    return resolve_.resolve("kind", progress=progress)


def kind_env() -> dict[str, str]:
    """kind on docker, on zoneproof's own network (kind's default is shared with users)."""
    return {"KIND_EXPERIMENTAL_PROVIDER": "docker", "KIND_EXPERIMENTAL_DOCKER_NETWORK": docker.NETWORK}


def node_image() -> str:
    """``$ZONEPROOF_KIND_IMAGE``, else the tag ``zoneproof build --node-image`` gives this machine."""
    if explicit := os.environ.get(IMAGE_ENV):
        return explicit
    return nodeimage.Recipe.for_machine(PINS, *rootfs.debian_source()).node_tag
