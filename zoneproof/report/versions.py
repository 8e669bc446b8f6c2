"""What was tested: versions of zoneproof, its Python dependencies and every upstream binary."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import platform
from typing import Any

from zoneproof import errors
from zoneproof.binaries import BINARIES, PINS, sha256_of
from zoneproof.binaries.resolve import resolve

__all__ = ["PACKAGES", "collect", "pinned"]

#: Python distributions whose versions a report names.
PACKAGES = ("kubernetes", "chaostoolkit", "chaostoolkit-lib", "chaostoolkit-kubernetes",
            "pytest", "pytest-xdist", "allure-pytest", "tenacity", "matplotlib")


def _package(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _binaries() -> dict[str, Any]:
    """Each pinned binary: version, and path + SHA-256 when it is built (never builds)."""
    out: dict[str, Any] = {}
    for name, project in BINARIES.items():
        entry: dict[str, Any] = {"project": project, "version": PINS.version_of(project)}
        try:
            path = resolve(name, build_missing=False, progress=lambda _: None)
        except errors.BinaryError:
            entry["path"] = None
        else:
            entry |= {"path": str(path), "sha256": sha256_of(path)}
        out[name] = entry
    return out


def collect(components: dict[str, Any]) -> dict[str, Any]:
    """Versions for a report; ``components`` describes the webhook and controller tested."""
    return {"zoneproof": _package("zoneproof"), "components": components,
            "python": {name: _package(name) for name in PACKAGES},
            "binaries": _binaries(), "allure": PINS.allure}


def pinned() -> dict[str, Any]:
    """What this zoneproof runs, without looking at any binary: its version, Python's, the
    Kubernetes pin, each pinned binary's version and project, and the other pinned tools."""
    pins = dataclasses.asdict(PINS)
    projects = set(BINARIES.values()) | {"kubernetes"}
    return {"zoneproof": _package("zoneproof"), "python": platform.python_version(),
            "kubernetes": PINS.kubernetes,
            "binaries": {name: {"project": project, "version": PINS.version_of(project)}
                         for name, project in BINARIES.items()},
            "tools": {name: version for name, version in pins.items()
                      if name.replace("_", "-") not in projects}}
