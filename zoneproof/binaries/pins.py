"""The one place where upstream versions are pinned."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BINARIES", "PINS", "Pins", "project_of"]


@dataclass(frozen=True, slots=True)
class Pins:
    """Versions of every upstream project zoneproof builds or runs."""

    kubernetes: str = "v1.37.2"
    #: The etcd that kubernetes v1.37.2 names in build/dependencies.yaml.
    etcd: str = "v3.7.0"
    kwok: str = "v0.8.0"
    #: Allure 3 report generator from npm (no Java): reports' HTML.
    allure: str = "3.18.0"

    def version_of(self, project: str) -> str:
        """The pinned version of ``project`` (``kubernetes``, ``etcd`` or ``kwok``)."""
        version: str = getattr(self, project)
        return version


PINS = Pins()

#: Binary name → upstream project that provides it.
BINARIES: dict[str, str] = {
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "etcd": "etcd",
    "kwok": "kwok",
}


def project_of(binary: str) -> str:
    """The upstream project that builds ``binary``."""
    return BINARIES[binary]
