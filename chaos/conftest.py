"""Chaos experiments on a private bed: after each one every kubelet runs and etcd is healthy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zoneproof.cluster.interface import Cluster

_RESTORE_TIMEOUT_S = 60.0


@pytest.fixture(autouse=True)
def restore_bed(module_bed: Cluster) -> Iterator[None]:
    """Whatever an experiment left: kubelets started, nodes Ready, etcd healthy."""
    yield
    nodes = [n for zone in module_bed.nodes_by_zone().values() for n in zone]
    for node in nodes:
        module_bed.start_kubelet(node)  # no-op while it runs
    module_bed.wait_nodes(nodes, ready=True, timeout_s=_RESTORE_TIMEOUT_S)
    module_bed.wait_etcd_healthy(timeout_s=_RESTORE_TIMEOUT_S)
