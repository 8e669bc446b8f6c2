"""What the command line prints: progress on stderr (each line with the time since the command
started, ``_util.progress``; none with ``-q``), results on stdout as text, JSON or YAML (``-o``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

import yaml

from zoneproof._util.progress import since_start

__all__ = ["FORMATS", "emit", "progress", "set_quiet"]

FORMATS = ("text", "json", "yaml")
_state = {"quiet": False}


def set_quiet(quiet: bool) -> None:
    """``-q``: no progress lines (errors and results still print)."""
    _state["quiet"] = quiet


def progress(message: str) -> None:
    """One progress line on stderr: ``[m:ss] message``, the time since the command started."""
    if _state["quiet"]:
        return
    print(f"{since_start()} {message}", file=sys.stderr, flush=True)


def emit(data: Any, output: str, text: Callable[[], Iterable[str]]) -> None:
    """Print a result: ``text()``'s lines, or ``data`` as JSON or YAML."""
    if output == "json":
        print(json.dumps(data, indent=1, default=str))
    elif output == "yaml":
        print(yaml.safe_dump(json.loads(json.dumps(data, default=str)), sort_keys=False,
                             allow_unicode=True, width=100), end="")
    else:
        for line in text():
            print(line)
