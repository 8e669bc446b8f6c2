"""The local backend: a real etcd quorum, control plane and kwok nodes as host processes."""

from zoneproof.cluster.local.backend import LocalBackend, LocalCluster

__all__ = ["LocalBackend", "LocalCluster"]
