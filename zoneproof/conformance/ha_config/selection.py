"""Which requests the API server sends to a webhook entry (spec §3), modelled for in-process runs.

Rules (group, version, resource, operation; ``/scale`` and other subresources never
match), namespaceSelector on the Namespace's labels (plus ``kubernetes.io/metadata.name``),
and objectSelector on the object's labels — on UPDATE the old *or* the new object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config.registration import LabelSelector, MutatingWebhook

__all__ = ["RESOURCES", "Call", "matches_selector", "selects"]

RESOURCES: Mapping[str, tuple[str, str, str]] = {
    "Deployment": ("apps", "v1", "deployments"),
    "StatefulSet": ("apps", "v1", "statefulsets"),
    "HorizontalPodAutoscaler": ("autoscaling", "v2", "horizontalpodautoscalers"),
}
"""kind → (group, version, resource) as the cases use them."""


@dataclass(frozen=True, slots=True)
class Call:
    """An API request as the webhook selection sees it."""

    group: str
    version: str
    resource: str
    operation: str
    namespace: str
    namespace_labels: Mapping[str, str]
    object_labels: Mapping[str, str]
    old_object_labels: Mapping[str, str] | None = None
    subresource: str = ""


def matches_selector(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics: all matchLabels and all expressions hold ({} matches all)."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        ok = {"Exists": present, "DoesNotExist": not present,
              "In": present and labels.get(key) in values,
              "NotIn": not present or labels.get(key) not in values}[operator]
        if not ok:
            return False
    return True


def _matches_rule(webhook: MutatingWebhook, call: Call) -> bool:
    def hit(values: list[str], value: str) -> bool:
        return "*" in values or value in values

    resource = f"{call.resource}/{call.subresource}" if call.subresource else call.resource
    return any(hit(rule["apiGroups"], call.group) and hit(rule["apiVersions"], call.version)
               and (resource in rule["resources"] or (not call.subresource and "*" in rule["resources"]))
               and hit(rule["operations"], call.operation)
               for rule in webhook["rules"])


def selects(webhook: MutatingWebhook, call: Call) -> bool:
    """True when the API server would call ``webhook`` for ``call``."""
    if not _matches_rule(webhook, call):
        return False
    namespace_labels = {**call.namespace_labels, keys.LABEL_METADATA_NAME: call.namespace}
    if not matches_selector(webhook["namespaceSelector"], namespace_labels):
        return False
    candidates = [call.object_labels]
    if call.operation == "UPDATE" and call.old_object_labels is not None:
        candidates.append(call.old_object_labels)
    return any(matches_selector(webhook["objectSelector"], labels) for labels in candidates)
