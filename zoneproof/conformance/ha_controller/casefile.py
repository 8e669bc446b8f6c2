"""JSON files of the generated controller suite (schedules, histories): written indented,
read back with a one-line error that names the file (``CaseFile``: save and load for a
class with ``to_dict``/``from_dict``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Self

from zoneproof import errors

__all__ = ["CaseFile", "read", "write"]


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


class CaseFile:
    """``save``/``load`` as JSON for a class with ``to_dict`` and ``from_dict``."""

    __slots__ = ()
    WHAT: ClassVar[str]
    """What a file holds, for errors ("controller schedule")."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        raise NotImplementedError

    def save(self, path: Path) -> Path:
        """Write as JSON."""
        return write(path, self.to_dict())

    @classmethod
    def load(cls, path: Path) -> Self:
        """Read a saved file."""
        return cls.from_dict(read(path, cls.WHAT))
