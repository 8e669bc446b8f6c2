"""Private files and directories: what zoneproof keeps for itself is 0600 / 0700 from birth.

State files, kubeconfigs, keys and the run's private directory hold credentials to a
cluster; they are created with their final mode (never world-readable for an instant).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DIR_MODE", "FILE_MODE", "private_dir", "write_private"]

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """``path`` (and missing parents) as a directory only its owner can enter; ``path``."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != DIR_MODE:
        path.chmod(DIR_MODE)
    return path


def write_private(path: Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path``, mode 0600 from creation on (an existing file is made 0600
    before it is truncated); ``path``."""
    raw = data.encode() if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return path
