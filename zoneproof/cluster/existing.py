"""The existing backend: a user's cluster, reached by kubeconfig. zoneproof never deletes it.

It can reach no kubelet, etcd member or control-plane process, so its clusters have none of
those facets; API-level disruption (cordon, drain, deleting pods) is refused unless the user
allows destructive faults explicitly.
"""

from __future__ import annotations

from pathlib import Path

import urllib3
import yaml
from kubernetes import client, config

from zoneproof import errors
from zoneproof._util import kube
from zoneproof.cluster._common import ApiCluster
from zoneproof.cluster.interface import BackendConfig, Capability, ClusterStatus, Progress, Traits
from zoneproof.cluster.spec import ClusterSpec, Timings

__all__ = ["ExistingBackend", "ExistingCluster", "unreachable"]

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
        """Node readiness (there are no processes of ours); BackendError if the cluster does
        not answer."""
        try:
            nodes = self.nodes_ready()
        except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise unreachable(self.kubeconfig, self.api.configuration.host, exc) from exc
        return ClusterStatus(self.name, self.backend, self.kubeconfig, {}, nodes)


def unreachable(kubeconfig: Path, server: str, exc: BaseException) -> errors.BackendError:
    """The error for a cluster that does not answer, naming what to check."""
    reason = getattr(exc, "reason", None) or exc
    return errors.BackendError(
        f"cannot reach the cluster of {kubeconfig} at {server}: {reason}; check that it is "
        "up and that the kubeconfig's server, credentials and CA are right (`kubectl "
        f"--kubeconfig {kubeconfig} get nodes` tells)")


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
        try:
            kube.api_client(self.kubeconfig).close()
        except (config.ConfigException, yaml.YAMLError, OSError, ValueError, TypeError,
                KeyError, AttributeError) as exc:
            raise errors.ConfigError(
                f"{self.kubeconfig} is not a usable kubeconfig ({type(exc).__name__}: "
                f"{str(exc)[:200]}): pass a kubeconfig kubectl accepts with --kubeconfig "
                "(pytest: --zp-kubeconfig)") from None
        return ExistingCluster(self.kubeconfig, allow_destructive=self.allow_destructive)

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> ExistingCluster:
        """Connect and check the API server answers; the spec is not applied."""
        cluster = self._cluster()
        try:
            zones = cluster.nodes_by_zone()
        except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise unreachable(cluster.kubeconfig, cluster.api.configuration.host, exc) from exc
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
