"""Clusters to test against: the Cluster/Backend interface, specs, facets, and the backends.

Belongs here: creating, finding and deleting clusters, and fault primitives on their
processes (kubelets, etcd members, control plane) as facets of a cluster. Backends are found
through the entry-point group ``zoneproof.backends`` (``registry``): each is a module of its
own (``local/``, ``kind/``, ``existing``) that no other backend imports, and nothing outside
it names it (callers read its ``Traits``). Not here: what a fault means for an experiment
(faults), measuring (measure), judging (slo), what a run holds and how it is undone (runs).
"""

from zoneproof.cluster.facets import facet
from zoneproof.cluster.interface import (
    RESOLVER_IMAGE,
    WORKLOAD_IMAGE,
    Backend,
    Capability,
    Cluster,
    ClusterStatus,
    ControlPlaneProcess,
    Traits,
)
from zoneproof.cluster.registry import DEFAULT as DEFAULT_BACKEND
from zoneproof.cluster.registry import backend_type, get_backend, private_bed_backend
from zoneproof.cluster.registry import names as backend_names
from zoneproof.cluster.spec import DEFAULT_ZONES, ClusterSpec, Timings

__all__ = [
    "DEFAULT_BACKEND",
    "DEFAULT_ZONES",
    "RESOLVER_IMAGE",
    "WORKLOAD_IMAGE",
    "Backend",
    "Capability",
    "Cluster",
    "ClusterSpec",
    "ClusterStatus",
    "ControlPlaneProcess",
    "Timings",
    "Traits",
    "backend_names",
    "backend_type",
    "facet",
    "get_backend",
    "private_bed_backend",
]
