"""Where the suites are: a zoneproof checkout, or the package ``zoneproof_suites`` a wheel installs.

The wheel carries the checkout's top-level ``conformance/``, ``chaos/``, ``deploy/``, the root
``conftest.py`` and ``pytest.ini`` as they stand (setup.py maps them into
``zoneproof_suites``), so one tree serves both: a checkout is found first (an editable install
runs its own files), else the installed copy.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from zoneproof import errors

__all__ = ["INSTALLED", "MARKERS", "holds_suites", "suite_path", "suites_root"]

INSTALLED = "zoneproof_suites"
"""The import name the wheel installs the suites under."""
MARKERS = ("pytest.ini", "conformance", "chaos")
"""What a directory holding the suites has."""


def holds_suites(directory: Path) -> bool:
    """True if ``directory`` has the suites and their pytest configuration."""
    return all((directory / marker).exists() for marker in MARKERS)


def _checkout() -> Path:
    return Path(__file__).resolve().parents[2]


def suites_root() -> Path:
    """The directory holding ``conformance/``, ``chaos/`` and ``pytest.ini``: the checkout this
    package runs from, else the installed ``zoneproof_suites``; ConfigError if neither."""
    checkout = _checkout()
    if holds_suites(checkout):
        return checkout
    spec = importlib.util.find_spec(INSTALLED)
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if holds_suites(Path(location)):
            return Path(location)
    raise errors.ConfigError(
        f"the suites (conformance/, chaos/) are neither next to the zoneproof package "
        f"({checkout}) nor installed as {INSTALLED}: reinstall zoneproof from its wheel "
        "(pip install zoneproof-*.whl) or run from a checkout (pip install -e .)")


def suite_path(*parts: str) -> Path:
    """A path under the suites' root (``suite_path("deploy")``); where the suites are missing,
    the checkout's path, so that what needs it names the file it did not find."""
    try:
        return suites_root().joinpath(*parts)
    except errors.ConfigError:
        return _checkout().joinpath(*parts)
