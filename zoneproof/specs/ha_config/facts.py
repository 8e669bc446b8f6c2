"""What the handler reads from the cluster (spec §4 steps 1, 3, 4) and a static source for tests.

The handler reads a Namespace's labels and annotations, the HPAs in the request's
namespace (name, scaleTargetRef, maxReplicas) and the number of Nodes. Zones come from
the Namespace annotation, never from Node labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from zoneproof import errors

__all__ = ["ClusterFacts", "FactsError", "HpaInfo", "NamespaceInfo", "StaticFacts"]


class FactsError(errors.ZoneproofError):
    """A cluster read failed (not found, cache not synced, API error); the handler answers 500."""


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """A Namespace's name, labels and annotations."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HpaInfo:
    """An ``autoscaling/v2`` HPA as far as the handler reads it."""

    name: str
    target_api_version: str
    target_kind: str
    target_name: str
    max_replicas: int


class ClusterFacts(Protocol):
    """A source of cluster facts; every read raises FactsError on failure."""

    def namespace(self, name: str) -> NamespaceInfo:
        """The Namespace called ``name``."""

    def hpas(self, namespace: str) -> Sequence[HpaInfo]:
        """The HPAs in ``namespace``, in list order."""

    def node_count(self) -> int:
        """The number of Node objects (all count: readiness and taints are ignored)."""

    def synced(self) -> bool:
        """True once every read can be answered (readiness)."""


@dataclass(frozen=True, slots=True)
class StaticFacts:
    """Fixed facts: for unit tests, conformance cases and runs without a cluster."""

    namespaces: Mapping[str, NamespaceInfo] = field(default_factory=dict)
    hpa_list: Mapping[str, Sequence[HpaInfo]] = field(default_factory=dict)
    nodes: int = 3

    def namespace(self, name: str) -> NamespaceInfo:
        """The Namespace, or FactsError in the API server's words."""
        try:
            return self.namespaces[name]
        except KeyError:
            raise FactsError(f'namespaces "{name}" not found') from None

    def hpas(self, namespace: str) -> Sequence[HpaInfo]:
        """The HPAs of ``namespace``."""
        return tuple(self.hpa_list.get(namespace, ()))

    def node_count(self) -> int:
        """The fixed Node count."""
        return self.nodes

    def synced(self) -> bool:
        """Always ready."""
        return True
