"""The kind backend: multi-zone kind clusters (real kubelets in containers), offline.

``config`` renders kind configs from a ClusterSpec, ``check`` validates one with kind's own
loader, ``docker`` and ``nodes`` wrap what runs on the host and inside node containers,
``tools`` finds the kind binary and node image; ``cluster`` is a running cluster and its
faults, ``backend`` makes and deletes them.
"""

from zoneproof.cluster.kind.backend import KindBackend
from zoneproof.cluster.kind.cluster import KindCluster

__all__ = ["KindBackend", "KindCluster"]
