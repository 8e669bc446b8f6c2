"""The kind backend: multi-zone kind clusters (real kubelets in containers), offline.

``config`` renders kind configs from a ClusterSpec, ``check`` validates one with kind's own
loader, ``docker`` and ``nodes`` wrap what runs on the host and inside node containers,
``tools`` finds the kind binary and node image, ``backend`` ties them into the interface.
"""

from zoneproof.cluster.kind.backend import KindBackend, KindCluster

__all__ = ["KindBackend", "KindCluster"]
