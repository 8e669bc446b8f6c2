"""The allure HTML report, generated offline by Allure 3 from npm (Node.js, no Java).

The CLI is installed once per pinned version into the cache
(``~/.cache/zoneproof/npm/allure-<version>``) or taken from ``$ZONEPROOF_ALLURE``. With a
history file (``HISTORY`` in the reports root) each report shows the runs before it: Allure
reads the file and appends this run to it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from zoneproof import errors
from zoneproof._util import processes
from zoneproof.binaries import PINS, cache_root

__all__ = ["HISTORY", "allure_cli", "generate"]

HISTORY = "allure-history.jsonl"
"""Allure's history of the runs in one reports root (next to their directories)."""

_INSTALL_TIMEOUT_S = 600.0
_GENERATE_TIMEOUT_S = 600.0


def allure_cli(version: str = PINS.allure) -> Path:
    """The allure executable: ``$ZONEPROOF_ALLURE``, else the cache, else ``npm install``."""
    if explicit := os.environ.get("ZONEPROOF_ALLURE"):
        path = Path(explicit).expanduser()
        if not os.access(path, os.X_OK):
            raise errors.ConfigError(f"ZONEPROOF_ALLURE={explicit} is not an executable: fix "
                                     "or unset it")
        return path
    prefix = cache_root() / "npm" / f"allure-{version}"
    cli = prefix / "node_modules" / ".bin" / "allure"
    if cli.exists():
        return cli
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise errors.ConfigError("the allure HTML report needs Node.js and npm: install them "
                                 "(Debian: apt-get install nodejs npm) or pass --no-html")
    staging = prefix.with_name(prefix.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        processes.run([npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
                       f"allure@{version}"], timeout_s=_INSTALL_TIMEOUT_S)
        staging.rename(prefix)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return cli


def generate(results: Path, output: Path, *, name: str, history: Path | None = None) -> Path:
    """Render ``results`` (allure-results) into ``output``; its index.html. With ``history``,
    the report carries the runs recorded there, and this run is appended to it."""
    if not results.is_dir() or not any(results.iterdir()):
        raise errors.ConfigError(f"no allure results in {results}: run pytest with "
                                 f"--alluredir={results} first")
    with tempfile.TemporaryDirectory(prefix="zoneproof-allure-") as tmp:
        config = Path(tmp) / "allurerc.json"
        config.write_text(json.dumps({"historyPath": str(history.resolve())} if history else {}))
        processes.run([str(allure_cli()), "generate", str(results), "--output", str(output),
                       "--report-name", name, "--config", str(config)],
                      timeout_s=_GENERATE_TIMEOUT_S, env={"NO_COLOR": "1"})
    index = output / "index.html"
    if not index.is_file():
        raise errors.ConfigError(f"allure generate wrote no {index}")
    return index
