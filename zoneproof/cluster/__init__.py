"""Clusters to test against: the Cluster/Backend interface, specs, and the backends.

Belongs here: creating, finding and deleting clusters, and fault primitives on their
processes (kubelets, etcd members, control plane). Not here: what a fault means for an
experiment (faults), measuring (measure), judging (slo).
"""

from zoneproof.cluster.interface import (
    WORKLOAD_IMAGE,
    Backend,
    Capability,
    Cluster,
    ClusterStatus,
    Component,
)
from zoneproof.cluster.registry import BACKEND_NAMES, default_etcd_members, get_backend
from zoneproof.cluster.spec import DEFAULT_ZONES, ClusterSpec, Timings

__all__ = [
    "BACKEND_NAMES",
    "WORKLOAD_IMAGE",
    "DEFAULT_ZONES",
    "Backend",
    "Capability",
    "Cluster",
    "ClusterSpec",
    "ClusterStatus",
    "Component",
    "Timings",
    "default_etcd_members",
    "get_backend",
]
