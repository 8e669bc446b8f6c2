"""What was tested: versions of zoneproof, its Python dependencies and every upstream binary."""

from __future__ import annotations

import importlib.metadata
from typing import Any

from zoneproof import errors
from zoneproof.binaries import BINARIES, PINS, resolve_all, sha256_of

__all__ = ["PACKAGES", "collect"]

#: Python distributions whose versions a report names.
PACKAGES = ("kubernetes", "chaostoolkit", "chaostoolkit-lib", "chaostoolkit-kubernetes",
            "pytest", "pytest-xdist", "allure-pytest", "tenacity", "matplotlib")


def _package(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _binaries() -> dict[str, Any]:
    try:
        found = resolve_all(build_missing=False, progress=lambda _: None)
    except errors.BinaryError as exc:
        return {"error": str(exc)}
    return {name: {"project": project, "version": PINS.version_of(project),
                   "path": str(found.path(name)), "sha256": sha256_of(found.path(name))}
            for name, project in BINARIES.items()}


def collect(components: dict[str, Any]) -> dict[str, Any]:
    """Versions for a report; ``components`` describes the webhook and controller tested."""
    return {"zoneproof": _package("zoneproof"), "components": components,
            "python": {name: _package(name) for name in PACKAGES},
            "binaries": _binaries(), "allure": PINS.allure}
