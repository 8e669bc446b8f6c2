"""The local backend: a real etcd quorum, control plane and kwok nodes as host processes."""

from zoneproof.cluster.local.backend import LocalBackend, LocalCluster
from zoneproof.cluster.local.options import LocalOptions

__all__ = ["LocalBackend", "LocalCluster", "LocalOptions"]
