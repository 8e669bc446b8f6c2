"""The one subprocess runner: commands that fail raise with command, exit code and stderr tail."""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from zoneproof import errors

__all__ = ["CommandError", "run", "tail"]

log = logging.getLogger(__name__)


class CommandError(errors.ZoneproofError):
    """A command exited non-zero; keeps the command line and the end of its output."""

    def __init__(self, argv: Sequence[str], returncode: int, output: str) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.output = output
        super().__init__(
            f"command failed (exit {returncode}): {shlex.join(self.argv)}\n{tail(output)}"
        )


def tail(text: str, lines: int = 25) -> str:
    """The last ``lines`` lines of ``text``, for error messages."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    log_file: Path | None = None,
    timeout_s: float | None = None,
) -> str:
    """Run ``argv`` to completion and return its combined output.

    With ``log_file``, output streams into that file (for long builds) and is read back.
    Raises CommandError on a non-zero exit, with the output's tail in the message.
    """
    full_env = {**os.environ, **(env or {})}
    log.debug("run: %s", shlex.join(argv))
    if log_file is None:
        proc = subprocess.run(
            list(argv), cwd=cwd, env=full_env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=timeout_s, check=False,
        )
        output = proc.stdout
    else:
        with log_file.open("w") as sink:
            proc = subprocess.run(
                list(argv), cwd=cwd, env=full_env, stdout=sink,
                stderr=subprocess.STDOUT, text=True, timeout=timeout_s, check=False,
            )
        output = log_file.read_text(errors="replace")
    if proc.returncode != 0:
        raise CommandError(argv, proc.returncode, output)
    return output
