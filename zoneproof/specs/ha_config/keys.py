"""Label, annotation, topology and taint keys, and the webhook's name and path (spec §2, §3)."""

from __future__ import annotations

from typing import Final

from zoneproof.specs import kubernetes

__all__ = [
    "ANNOTATION_FAILURE_TOLERANCE_TYPE",
    "ANNOTATION_HOST_SPREAD",
    "ANNOTATION_REPLICAS",
    "ANNOTATION_ZONES",
    "ANNOTATION_ZONE_PINNING",
    "LABEL_CONSIDER",
    "LABEL_METADATA_NAME",
    "LABEL_SKIP",
    "LABEL_TYPE",
    "POD_TEMPLATE_HASH",
    "PREFIX",
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
    "TOPOLOGY_HOSTNAME",
    "TOPOLOGY_ZONE",
    "TYPE_CONTROLLER",
    "TYPE_SERVER",
    "WEBHOOK_NAME",
    "WEBHOOK_PATH",
]

PREFIX: Final = "high-availability-config.resources.gardener.cloud/"
LABEL_CONSIDER: Final = PREFIX + "consider"
LABEL_SKIP: Final = PREFIX + "skip"
LABEL_TYPE: Final = PREFIX + "type"
ANNOTATION_REPLICAS: Final = PREFIX + "replicas"
ANNOTATION_HOST_SPREAD: Final = PREFIX + "host-spread"
ANNOTATION_FAILURE_TOLERANCE_TYPE: Final = PREFIX + "failure-tolerance-type"
ANNOTATION_ZONES: Final = PREFIX + "zones"
ANNOTATION_ZONE_PINNING: Final = PREFIX + "zone-pinning"

TYPE_CONTROLLER: Final = "controller"
TYPE_SERVER: Final = "server"

LABEL_METADATA_NAME: Final = kubernetes.METADATA_NAME_LABEL
TOPOLOGY_HOSTNAME: Final = kubernetes.HOSTNAME_LABEL
TOPOLOGY_ZONE: Final = kubernetes.ZONE_LABEL
POD_TEMPLATE_HASH: Final = "pod-template-hash"
TAINT_NOT_READY: Final = kubernetes.TAINT_NOT_READY
TAINT_UNREACHABLE: Final = kubernetes.TAINT_UNREACHABLE

WEBHOOK_NAME: Final = "high-availability-config.resources.gardener.cloud"
WEBHOOK_PATH: Final = "/webhooks/high-availability-config"
