"""Where backends keep per-cluster state: ``$ZONEPROOF_STATE`` or ``~/.local/state/zoneproof``.

State files hold credentials' paths and ports: written 0600, atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from zoneproof._util import files

__all__ = ["read_json", "state_root", "write_json"]


def state_root() -> Path:
    """``$ZONEPROOF_STATE``, else ``$XDG_STATE_HOME/zoneproof``, else ``~/.local/state/zoneproof``."""
    if explicit := os.environ.get("ZONEPROOF_STATE"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "zoneproof"


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically (temp file + rename, mode 0600), so a crash never leaves half a file."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    files.write_private(tmp, json.dumps(data, indent=2, sort_keys=True))
    tmp.replace(path)


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``."""
    data: dict[str, Any] = json.loads(path.read_text())
    return data
