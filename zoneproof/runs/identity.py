"""Which cluster was tested, as reports name it: API server URL, kube-system UID, version.

A name is not an identity (every bed is called ``zoneproof`` by default, a kubeconfig's
stem says little): the UID of the kube-system namespace is unique per cluster and stable
for its life, the URL says where it was reached, the version what it ran. A run records
every cluster it tests (``record``) so its reports can list them (``recorded``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Protocol

import urllib3
from kubernetes import client

from zoneproof import runs
from zoneproof._util import kube
from zoneproof.runs import state

__all__ = ["ClusterIdentity", "Reachable", "identify", "record", "recorded"]


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    """A cluster as a report names it."""

    name: str
    backend: str
    server: str
    kube_system_uid: str
    version: str
    role: str = "under test"
    """``under test`` (the run's cluster) or ``private bed`` (a destructive test's own)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClusterIdentity:
        """The identity ``to_dict`` wrote."""
        return cls(**{f.name: str(data[f.name]) for f in fields(cls) if f.name in data})

    def describe(self) -> str:
        """One line for people."""
        return (f"{self.backend} cluster {self.name!r} at {self.server} (kube-system uid "
                f"{self.kube_system_uid}, {self.version})")


class Reachable(Protocol):
    """What ``identify`` reads of a cluster (every ``zoneproof.cluster.Cluster`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def kubeconfig(self) -> Path: ...


def identify(cluster: Reachable, role: str = "under test") -> ClusterIdentity:
    """Ask ``cluster``'s API server who it is (fields it cannot answer read ``unknown``)."""
    uid = version = "unknown"
    with kube.api_client(cluster.kubeconfig, retries=1) as api:
        server = str(api.configuration.host)
        with contextlib.suppress(client.ApiException, urllib3.exceptions.HTTPError):
            uid = str(client.CoreV1Api(api).read_namespace("kube-system",
                                                           _request_timeout=10).metadata.uid)
        with contextlib.suppress(client.ApiException, urllib3.exceptions.HTTPError):
            version = str(client.VersionApi(api).get_code(_request_timeout=10).git_version)
    return ClusterIdentity(cluster.name, cluster.backend, server, uid, version, role)


def record(found: ClusterIdentity) -> None:
    """Note in the current run that it tests ``found`` (once per cluster)."""
    run = runs.current()
    if run is None:
        return
    directory = run.directory / "clusters"
    directory.mkdir(exist_ok=True)
    state.write_json(directory / f"{found.kube_system_uid}-{found.name}.json", found.to_dict())


def recorded(run: runs.Run) -> list[ClusterIdentity]:
    """Every cluster ``run`` recorded, the one under test first."""
    directory: Path = run.directory / "clusters"
    found = [ClusterIdentity.from_dict(state.read_json(p))
             for p in sorted(directory.glob("*.json"))] if directory.is_dir() else []
    return sorted(found, key=lambda c: (c.role != "under test", c.name))
