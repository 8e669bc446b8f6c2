"""Backend names → backends: the one place that knows them all."""

from __future__ import annotations

from pathlib import Path

from zoneproof import errors
from zoneproof.cluster.existing import ExistingBackend
from zoneproof.cluster.interface import Backend
from zoneproof.cluster.kind import KindBackend
from zoneproof.cluster.local import LocalBackend

__all__ = ["BACKEND_NAMES", "default_etcd_members", "get_backend"]

BACKEND_NAMES = ("local", "existing", "kind")
#: etcd members of a default cluster, for the backends that make clusters.
_DEFAULT_ETCD_MEMBERS = {"local": 3, "kind": 1}


def default_etcd_members(backend: str) -> int:
    """etcd members of a default cluster: 3 local processes; 1 kind control-plane node
    (kind's 3-member quorum needs 3 control-plane containers: ask for it with 3)."""
    return _DEFAULT_ETCD_MEMBERS.get(backend, 3)


def get_backend(name: str, *, kubeconfig: Path | None = None,
                allow_destructive: bool = False) -> Backend:
    """The backend called ``name``; ConfigError lists the valid names."""
    if name == "local":
        return LocalBackend()
    if name == "existing":
        return ExistingBackend(kubeconfig, allow_destructive=allow_destructive)
    if name == "kind":
        return KindBackend()
    raise errors.ConfigError(f"unknown backend {name!r}: choose one of {', '.join(BACKEND_NAMES)}")
