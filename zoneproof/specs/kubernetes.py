"""Well-known Kubernetes labels and taints, and label selectors read as labels.

The one definition of each key every room uses (the cluster labels its Nodes with them,
recorders read them, workloads spread over them, the spec's webhook writes them).
"""

from __future__ import annotations

from typing import Final

from zoneproof import errors

__all__ = [
    "HOSTNAME_LABEL",
    "METADATA_NAME_LABEL",
    "REGION_LABEL",
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
    "ZONE_LABEL",
    "matching_labels",
    "zone_selector",
]

ZONE_LABEL: Final = "topology.kubernetes.io/zone"
REGION_LABEL: Final = "topology.kubernetes.io/region"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
METADATA_NAME_LABEL: Final = "kubernetes.io/metadata.name"
TAINT_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE: Final = "node.kubernetes.io/unreachable"


def zone_selector(zone: str) -> str:
    """The label selector of the Nodes of ``zone``."""
    return f"{ZONE_LABEL}={zone}"


def matching_labels(selector: str) -> dict[str, str]:
    """Labels an equality-based selector (``k=v,k2==v2``) matches; ConfigError otherwise."""
    pairs = [term.replace("==", "=").split("=", 1) for term in selector.split(",") if term]
    if not pairs or not all(len(p) == 2 and p[0].strip() and "!" not in p[0] for p in pairs):
        raise errors.ConfigError(f"selector {selector!r} is not equality-based (k=v,...): "
                                 "workloads need labels it matches")
    return {k.strip(): v.strip() for k, v in pairs}
