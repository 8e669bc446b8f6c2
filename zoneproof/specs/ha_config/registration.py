"""Rendering the MutatingWebhookConfiguration (spec §3) for a URL or an in-cluster Service.

Only the ``consider`` matchLabel and the ``skip`` expression are used (the spec's advice
for a conformance harness). ``Selection`` knobs exist so that a deliberately broken
component can be registered with its broken selection; the defaults are the spec's.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from zoneproof import errors
from zoneproof.specs.ha_config import keys

__all__ = [
    "DEFAULT_CONFIGURATION_NAME",
    "ClientConfig",
    "LabelSelector",
    "MutatingWebhook",
    "MutatingWebhookConfiguration",
    "Rule",
    "Selection",
    "ServiceRef",
    "render_webhook",
    "render_webhook_configuration",
    "webhook_url",
]

DEFAULT_CONFIGURATION_NAME = "zoneproof-high-availability-config"


class SelectorRequirement(TypedDict):
    """A label selector expression."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: NotRequired[list[str]]


class LabelSelector(TypedDict, total=False):
    """metav1.LabelSelector."""

    matchLabels: dict[str, str]
    matchExpressions: list[SelectorRequirement]


class Rule(TypedDict):
    """One RuleWithOperations."""

    apiGroups: list[str]
    apiVersions: list[str]
    resources: list[str]
    operations: list[str]


class ServiceReference(TypedDict):
    """clientConfig.service."""

    name: str
    namespace: str
    path: str
    port: int


class ClientConfig(TypedDict, total=False):
    """clientConfig: ``url`` or ``service``, plus ``caBundle`` (base64 PEM)."""

    url: str
    service: ServiceReference
    caBundle: str


class MutatingWebhook(TypedDict):
    """One webhook entry."""

    name: str
    rules: list[Rule]
    namespaceSelector: LabelSelector
    objectSelector: LabelSelector
    clientConfig: ClientConfig
    admissionReviewVersions: list[str]
    failurePolicy: Literal["Fail", "Ignore"]
    matchPolicy: Literal["Equivalent", "Exact"]
    sideEffects: Literal["None"]
    timeoutSeconds: int


class ObjectMeta(TypedDict):
    """metadata of the configuration."""

    name: str


class MutatingWebhookConfiguration(TypedDict):
    """admissionregistration.k8s.io/v1 MutatingWebhookConfiguration."""

    apiVersion: Literal["admissionregistration.k8s.io/v1"]
    kind: Literal["MutatingWebhookConfiguration"]
    metadata: ObjectMeta
    webhooks: list[MutatingWebhook]


@dataclass(frozen=True, slots=True)
class Selection:
    """What the registration selects; every default is the spec's (§3)."""

    consider_label: bool = True
    """namespaceSelector requires ``consider=true``."""
    skip_label: bool = True
    """objectSelector excludes objects carrying the ``skip`` label."""
    on_update: bool = True
    """The rules list UPDATE as well as CREATE."""


SPEC = Selection()


@dataclass(frozen=True, slots=True)
class ServiceRef:
    """An in-cluster Service in front of the webhook."""

    name: str
    namespace: str
    port: int = 443


def webhook_url(host: str, port: int) -> str:
    """``https://host:port/webhooks/high-availability-config`` (IPv6 hosts bracketed)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"https://{shown}:{port}{keys.WEBHOOK_PATH}"


def render_webhook(*, ca_bundle: bytes, url: str | None = None, service: ServiceRef | None = None,
                   selection: Selection = SPEC) -> MutatingWebhook:
    """The webhook entry; exactly one of ``url`` and ``service``. ``ca_bundle`` is PEM bytes."""
    if (url is None) == (service is None):
        raise errors.ConfigError("render_webhook needs exactly one of url= and service=")
    if not ca_bundle.strip():
        raise errors.ConfigError("render_webhook needs a non-empty PEM ca_bundle")
    client: ClientConfig = {"caBundle": base64.b64encode(ca_bundle).decode()}
    if url is not None:
        client["url"] = url
    elif service is not None:
        client["service"] = {"name": service.name, "namespace": service.namespace,
                             "path": keys.WEBHOOK_PATH, "port": service.port}
    operations = ["CREATE", "UPDATE"] if selection.on_update else ["CREATE"]
    namespace_selector: LabelSelector = {}
    if selection.consider_label:
        namespace_selector["matchLabels"] = {keys.LABEL_CONSIDER: "true"}
    object_selector: LabelSelector = {}
    if selection.skip_label:
        object_selector["matchExpressions"] = [{"key": keys.LABEL_SKIP, "operator": "DoesNotExist"}]
    return {
        "name": keys.WEBHOOK_NAME,
        "rules": [
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments", "statefulsets"],
             "operations": list(operations)},
            {"apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"],
             "operations": list(operations)},
        ],
        "namespaceSelector": namespace_selector,
        "objectSelector": object_selector,
        "clientConfig": client,
        "admissionReviewVersions": ["v1beta1", "v1"],
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": 10,
    }


def render_webhook_configuration(*, ca_bundle: bytes, url: str | None = None,
                                 service: ServiceRef | None = None, selection: Selection = SPEC,
                                 name: str = DEFAULT_CONFIGURATION_NAME) -> MutatingWebhookConfiguration:
    """The whole MutatingWebhookConfiguration (reinvocationPolicy unset: the default Never)."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [render_webhook(ca_bundle=ca_bundle, url=url, service=service, selection=selection)],
    }
