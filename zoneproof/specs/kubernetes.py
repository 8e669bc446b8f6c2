"""Well-known Kubernetes labels and taints, and label selectors read as labels.

The one definition of each key every room uses (the cluster labels its Nodes with them,
recorders read them, workloads spread over them, the spec's webhook writes them).
"""

from __future__ import annotations

import re
from typing import Final

from zoneproof import errors

__all__ = [
    "HOSTNAME_LABEL",
    "METADATA_NAME_LABEL",
    "REGION_LABEL",
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
    "ZONE_LABEL",
    "is_dns_label",
    "is_dns_subdomain",
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


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


def is_dns_label(text: str) -> bool:
    """True for an RFC 1123 label (a namespace's name)."""
    return _DNS_LABEL.fullmatch(text) is not None


def is_dns_subdomain(text: str) -> bool:
    """True for an RFC 1123 subdomain (most objects' names)."""
    return _DNS_SUBDOMAIN.fullmatch(text) is not None


def _label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return (not prefix or is_dns_subdomain(prefix)) and _LABEL_NAME.fullmatch(name) is not None


def matching_labels(selector: str) -> dict[str, str]:
    """Labels an equality-based selector (``k=v,k2==v2``) matches; ConfigError otherwise."""
    pairs = [term.replace("==", "=").split("=", 1) for term in selector.split(",") if term]
    if not pairs or not all(len(p) == 2 and p[0].strip() and "!" not in p[0] for p in pairs):
        raise errors.ConfigError(f"selector {selector!r} is not equality-based (k=v,...): "
                                 "workloads need labels it matches")
    labels = {k.strip(): v.strip() for k, v in pairs}
    bad = [f"{k}={v}" for k, v in labels.items()
           if not _label_key(k) or (v and _LABEL_NAME.fullmatch(v) is None)]
    if bad:
        raise errors.ConfigError(f"selector {selector!r}: {', '.join(bad)} is not a valid label "
                                 "(key: [prefix/]name, name and value up to 63 letters, digits, "
                                 "'-', '_', '.', starting and ending alphanumeric)")
    return labels
