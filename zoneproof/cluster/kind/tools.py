"""Where the kind backend finds the ``kind`` binary and the offline node image."""

from __future__ import annotations

import os
from pathlib import Path

from zoneproof.binaries import PINS
from zoneproof.binaries import resolve as resolve_
from zoneproof.cluster.interface import Progress

__all__ = ["IMAGE_ENV", "kind_binary", "node_image"]

IMAGE_ENV = "ZONEPROOF_KIND_IMAGE"


def kind_binary(progress: Progress = print) -> Path:
    """The pinned kind: ``ZONEPROOF_KIND`` → ``ZONEPROOF_BIN_DIR`` → cache → ``go`` build."""
    return resolve_.resolve("kind", progress=progress)


def node_image() -> str:
    """The node image the kind backend runs: ``$ZONEPROOF_KIND_IMAGE`` or the pinned tag."""
    return os.environ.get(IMAGE_ENV) or f"zoneproof/kind-node:{PINS.kubernetes}"
