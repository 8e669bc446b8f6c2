"""The existing backend reads a cluster it did not make, and refuses to break or delete it."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import cluster, errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.cluster.spec import ClusterSpec


def _existing(kubeconfig: Path, allow: bool = False) -> Cluster:
    backend = cluster.get_backend("existing", kubeconfig=kubeconfig, allow_destructive=allow)
    return backend.create(ClusterSpec(), progress=lambda _: None)


def test_reads_zones_and_refuses_process_faults(cluster_under_test: Cluster) -> None:
    existing = _existing(cluster_under_test.kubeconfig)
    assert existing.nodes_by_zone() == cluster_under_test.nodes_by_zone()
    assert Capability.DESTRUCTIVE not in existing.capabilities
    node = existing.nodes_by_zone()["zone-a"][0]
    for capability in (Capability.STOP_KUBELET, Capability.ETCD_MEMBERS,
                       Capability.CONTROL_PLANE):
        with pytest.raises(errors.FaultError, match=r"existing backend.*local or kind"):
            facets.facet(existing, capability)  # type: ignore[call-overload]
    with pytest.raises(errors.FaultError, match=r"existing backend.*the kind backend"):
        facets.facet(existing, Capability.NODE_CONTAINERS)
    assert not hasattr(existing, "stop_kubelet"), "no stubs: the facet is absent, not refused"
    assert cluster_under_test.nodes_ready()[node]


def test_destructive_only_when_allowed_and_never_deleted(cluster_under_test: Cluster) -> None:
    if Capability.DESTRUCTIVE in cluster_under_test.capabilities:
        pytest.skip("the cluster under test runs this run's own node agent (a user's cluster "
                    "with --zp-allow-destructive): the delete here would remove it from under "
                    "the destructive tests running beside")
    allowed = _existing(cluster_under_test.kubeconfig, allow=True)
    assert Capability.DESTRUCTIVE in allowed.capabilities
    backend = cluster.get_backend("existing", kubeconfig=cluster_under_test.kubeconfig)
    assert backend.delete("anything", progress=lambda _: None) is False
    assert cluster_under_test.apiserver_ready()


def test_missing_kubeconfig_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="--kubeconfig"):
        _existing(tmp_path / "nope.yaml")
