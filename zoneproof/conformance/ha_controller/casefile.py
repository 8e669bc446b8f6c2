"""JSON files of the generated controller suite (schedules, histories): written indented,
read back with a one-line error that names the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zoneproof import errors

__all__ = ["read", "write"]


def write(path: Path, data: Any) -> Path:
    """Write ``data`` as JSON to ``path``."""
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def read(path: Path, what: str) -> Any:
    """The JSON in ``path``; ConfigError ("cannot read <what> <path>: ...") if it is not."""
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise errors.ConfigError(f"cannot read {what} {path}: {exc}") from exc
