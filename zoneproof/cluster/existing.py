"""The existing backend: a user's cluster, reached by kubeconfig. zoneproof never deletes it.

It can reach no kubelet, etcd member or control-plane process, so its clusters have none of
those facets; API-level disruption (cordon, drain, deleting pods) is refused unless the user
allows destructive faults explicitly.
"""

from __future__ import annotations

from pathlib import Path

from zoneproof import errors
from zoneproof.cluster._common import ApiCluster
from zoneproof.cluster.interface import BackendConfig, Capability, ClusterStatus, Progress, Traits
from zoneproof.cluster.spec import ClusterSpec, Timings

__all__ = ["ExistingBackend", "ExistingCluster"]

NAME = "existing"


class ExistingCluster(ApiCluster):
    """A cluster zoneproof did not create."""

    backend = NAME

    def __init__(self, kubeconfig: Path, *, allow_destructive: bool) -> None:
        self.kubeconfig = kubeconfig
        self.name = kubeconfig.stem
        self.capabilities = frozenset({Capability.DESTRUCTIVE} if allow_destructive else ())
        self.timings = Timings.upstream()  # its own cannot be read: assume upstream's

    def status(self) -> ClusterStatus:
        """Node readiness (there are no processes of ours)."""
        return ClusterStatus(self.name, self.backend, self.kubeconfig, {}, self.nodes_ready())


class ExistingBackend:
    """Connects to the cluster of a kubeconfig; create checks it answers, delete does nothing."""

    name = NAME
    traits = Traits(summary="a cluster you already have, reached by --kubeconfig; never deleted",
                    makes_clusters=False, needs_kubeconfig=True)

    def __init__(self, kubeconfig: Path | None, *, allow_destructive: bool = False) -> None:
        self.kubeconfig = kubeconfig
        self.allow_destructive = allow_destructive

    @classmethod
    def from_config(cls, config: BackendConfig) -> ExistingBackend:
        """The cluster of ``config.kubeconfig``; destructive faults only if allowed."""
        return cls(config.kubeconfig, allow_destructive=config.allow_destructive)

    def prepare(self, progress: Progress) -> None:
        """Nothing to fetch: the cluster exists."""

    def _cluster(self) -> ExistingCluster:
        if self.kubeconfig is None:
            raise errors.ConfigError("the existing backend needs a kubeconfig: pass "
                                     "--kubeconfig PATH (pytest: --zp-kubeconfig PATH)")
        if not self.kubeconfig.is_file():
            raise errors.ConfigError(f"kubeconfig {self.kubeconfig} does not exist: pass the "
                                     "path of a readable kubeconfig file with --kubeconfig "
                                     "(pytest: --zp-kubeconfig)")
        return ExistingCluster(self.kubeconfig, allow_destructive=self.allow_destructive)

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> ExistingCluster:
        """Connect and check the API server answers; the spec is not applied."""
        cluster = self._cluster()
        try:
            zones = cluster.nodes_by_zone()
        except Exception as exc:
            raise errors.BackendError(
                f"cannot reach the cluster of {self.kubeconfig}: {exc}") from exc
        progress(f"using existing cluster of {self.kubeconfig}: zones {sorted(zones)}"
                 f"{'' if self.allow_destructive else ' (destructive faults refused)'}")
        return cluster

    def get(self, name: str) -> ExistingCluster | None:
        """The cluster of the kubeconfig."""
        return self._cluster()

    def delete(self, name: str, *, progress: Progress) -> bool:
        """Never deletes a user's cluster."""
        progress("existing backend: the cluster is not zoneproof's; nothing deleted")
        return False

    def names(self) -> list[str]:
        """The kubeconfig's stem."""
        return [self._cluster().name] if self.kubeconfig else []
