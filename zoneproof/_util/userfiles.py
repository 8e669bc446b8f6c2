"""Files a user hands zoneproof (SLO file, certification profile, kubeconfig): read safely.

Each is read whole, up to ``MAX_BYTES``; a file that is not UTF-8 text (a binary file
given by mistake) is refused in one line naming what was expected, and YAML is parsed by
PyYAML's safe loader with aliases limited (``MAX_ALIASES``): a "billion laughs" document
of a few hundred bytes, whose aliases nest lists exponentially, is refused before anything
walks or prints it. ``bounded`` cuts any message to a size a terminal can show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from zoneproof import errors

__all__ = ["MAX_ALIASES", "MAX_BYTES", "bounded", "load_yaml", "read_text"]

MAX_BYTES = 4 * 1024 * 1024
"""No SLO file, profile or kubeconfig comes near this; a bigger file is not one."""
MAX_ALIASES = 16
"""YAML aliases (``*name``) one file may use: none of zoneproof's files needs any, and 16 can
expand a document a few hundred times at most (a tree of aliases of aliases)."""
_MESSAGE_CHARS = 4000
_LINE_CHARS = 400


def bounded(message: str, *, chars: int = _MESSAGE_CHARS, line_chars: int = _LINE_CHARS) -> str:
    """``message`` with each line cut to ``line_chars`` and the whole to ``chars``."""
    lines = [line if len(line) <= line_chars else f"{line[:line_chars]}… ({len(line)} chars)"
             for line in message.splitlines() or [""]]
    text = "\n".join(lines)
    return text if len(text) <= chars else f"{text[:chars]}… ({len(text) - chars} more chars)"


def read_text(path: Path, what: str, fix: str) -> str:
    """The text of ``path`` (``what`` it should be; ``fix`` says what to give instead);
    ConfigError in one line if it cannot be read, is too big or is not UTF-8 text."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise errors.ConfigError(f"{what} {path}: {exc.strerror or exc}: {fix}") from None
    if len(data) > MAX_BYTES:
        raise errors.ConfigError(f"{what} {path} is over {MAX_BYTES // 2**20} MiB: not a {what}; "
                                 f"{fix}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.ConfigError(f"{what} {path} is not text (not UTF-8): a binary file? "
                                 f"{fix}") from None
    if "\0" in text:
        raise errors.ConfigError(f"{what} {path} is not text (it holds NUL bytes): a binary "
                                 f"file? {fix}")
    return text


class _LimitedLoader(yaml.SafeLoader):
    """The safe loader, refusing documents with more than ``MAX_ALIASES`` aliases."""

    aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases (*name): a document "
                                     "that expands exponentially (\"billion laughs\")?")
        return super().compose_node(parent, index)


def load_yaml(path: Path, what: str, fix: str) -> Any:
    """The YAML document in ``path`` (``read_text``'s checks, then the safe loader with
    aliases limited); ConfigError naming ``what`` and the ``fix``, bounded in size."""
    text = read_text(path, what, fix)
    try:
        return yaml.load(text, Loader=_LimitedLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        where = " ".join(str(exc).split())  # PyYAML's message spans lines: one line here
        raise errors.ConfigError(bounded(f"{what} {path} is not valid YAML ({where}): {fix}",
                                         chars=1000)) from None
    except RecursionError:
        raise errors.ConfigError(f"{what} {path} nests too deeply to be a {what}: {fix}") from None
