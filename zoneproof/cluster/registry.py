"""Backend names → backends: the one place that knows them all."""

from __future__ import annotations

from pathlib import Path

from zoneproof import errors
from zoneproof.cluster.existing import ExistingBackend
from zoneproof.cluster.interface import Backend
from zoneproof.cluster.local import LocalBackend

__all__ = ["BACKEND_NAMES", "get_backend"]

BACKEND_NAMES = ("local", "existing")


def get_backend(name: str, *, kubeconfig: Path | None = None,
                allow_destructive: bool = False) -> Backend:
    """The backend called ``name``; ConfigError lists the valid names."""
    if name == "local":
        return LocalBackend()
    if name == "existing":
        return ExistingBackend(kubeconfig, allow_destructive=allow_destructive)
    if name == "kind":
        raise errors.ConfigError("the kind backend is not available yet: use --backend local "
                                 "(default) or --backend existing --kubeconfig PATH")
    raise errors.ConfigError(f"unknown backend {name!r}: choose one of {', '.join(BACKEND_NAMES)}")
