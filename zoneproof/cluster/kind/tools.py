"""Where the kind backend finds the ``kind`` binary and the offline node image."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from zoneproof import errors
from zoneproof.binaries import PINS

__all__ = ["IMAGE_ENV", "KIND_ENV", "kind_binary", "node_image"]

KIND_ENV = "ZONEPROOF_KIND"
IMAGE_ENV = "ZONEPROOF_KIND_IMAGE"


def kind_binary() -> Path:
    """``$ZONEPROOF_KIND``, else ``kind`` on PATH; BinaryError naming the fix otherwise."""
    if explicit := os.environ.get(KIND_ENV):
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise errors.BinaryError(f"{KIND_ENV}={explicit} is not an executable file")
        return path
    if found := shutil.which("kind"):
        return Path(found)
    raise errors.BinaryError(f"the kind binary is not found: put `kind` on PATH or set {KIND_ENV}")


def node_image() -> str:
    """The node image the kind backend runs: ``$ZONEPROOF_KIND_IMAGE`` or the pinned tag."""
    return os.environ.get(IMAGE_ENV) or f"zoneproof/kind-node:{PINS.kubernetes}"
