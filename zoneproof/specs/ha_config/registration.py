"""The MutatingWebhookConfiguration (spec §3): rendered for a URL or a Service, or a vendor's adopted.

Only the ``consider`` matchLabel and the ``skip`` expression are used (the spec's advice
for a conformance harness). ``Selection`` knobs exist so that a deliberately broken
component can be registered with its broken registration; the defaults are the spec's.

A vendor may supply their own configuration (``load_file``); ``adopt`` keeps everything
the spec judges (rules, selectors, policies, timeouts, review versions, names) and
overrides only what the suite must own: ``metadata.name`` (so every bed and run registers
and removes its own), server-set metadata (dropped), and each entry's ``clientConfig``
(``url``/``caBundle`` where the suite serves the webhook or was told its URL and CA; a
``service`` reference is kept for a webhook reached by URL that runs in the cluster).
"""

from __future__ import annotations

import base64
import copy
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import yaml

from zoneproof import errors
from zoneproof.specs.ha_config import keys

__all__ = [
    "DEFAULT_CONFIGURATION_NAME",
    "ClientConfig",
    "LabelSelector",
    "MutatingWebhook",
    "MutatingWebhookConfiguration",
    "Rule",
    "SPEC",
    "Selection",
    "ServiceRef",
    "adopt",
    "entry_path",
    "load_file",
    "render_webhook",
    "render_webhook_configuration",
    "render_webhooks",
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
    failurePolicy: str
    matchPolicy: str
    sideEffects: str
    timeoutSeconds: int
    reinvocationPolicy: NotRequired[str]


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
    """What the registration says; every default is the spec's (§3)."""

    consider_label: bool = True
    """namespaceSelector requires ``consider=true``."""
    skip_label: bool = True
    """objectSelector excludes objects carrying the ``skip`` label."""
    on_update: bool = True
    """The rules list UPDATE as well as CREATE."""
    consider_label_deployments_only: bool = False
    """Broken when True: two entries, the ``consider`` selector only on the Deployments one."""
    scale_subresource: bool = False
    """Broken when True: the rules match the Deployments' and StatefulSets' ``/scale`` too."""
    failure_policy: str = "Fail"
    match_policy: str = "Equivalent"
    side_effects: str = "None"
    timeout_seconds: int = 10
    review_versions: tuple[str, ...] = ("v1beta1", "v1")
    reinvocation_policy: str | None = None
    """None: unset, so the API default ``Never`` applies (the spec)."""


SPEC = Selection()


@dataclass(frozen=True, slots=True)
class ServiceRef:
    """An in-cluster Service in front of the webhook."""

    name: str
    namespace: str
    port: int = 443


def webhook_url(host: str, port: int, path: str = keys.WEBHOOK_PATH) -> str:
    """``https://host:port/webhooks/high-availability-config`` (IPv6 hosts bracketed)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"https://{shown}:{port}{path}"


def _client(ca_bundle: bytes, url: str | None, service: ServiceRef | None) -> ClientConfig:
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
    return client


_SPEC_RESOURCES = [("apps", "v1", "deployments"), ("apps", "v1", "statefulsets"),
                   ("autoscaling", "v2", "horizontalpodautoscalers")]


def _rules(resources: list[tuple[str, str, str]], selection: Selection) -> list[Rule]:
    operations = ["CREATE", "UPDATE"] if selection.on_update else ["CREATE"]
    by_group: dict[tuple[str, str], list[str]] = {}
    for group, version, resource in resources:
        found = by_group.setdefault((group, version), [])
        scaled = selection.scale_subresource and group == "apps"
        found += [resource, f"{resource}/scale"] if scaled else [resource]
    return [{"apiGroups": [group], "apiVersions": [version], "resources": names,
             "operations": list(operations)} for (group, version), names in by_group.items()]


def render_webhooks(*, ca_bundle: bytes, url: str | None = None, service: ServiceRef | None = None,
                    selection: Selection = SPEC) -> list[MutatingWebhook]:
    """The webhook entries (one; two with ``consider_label_deployments_only``); exactly one of
    ``url`` and ``service``. ``ca_bundle`` is PEM bytes."""
    client = _client(ca_bundle, url, service)
    object_selector: LabelSelector = {}
    if selection.skip_label:
        object_selector["matchExpressions"] = [{"key": keys.LABEL_SKIP, "operator": "DoesNotExist"}]

    def entry(name: str, resources: list[tuple[str, str, str]], consider: bool) -> MutatingWebhook:
        namespace_selector: LabelSelector = {}
        if consider:
            namespace_selector["matchLabels"] = {keys.LABEL_CONSIDER: "true"}
        rendered: MutatingWebhook = {
            "name": name, "rules": _rules(resources, selection),
            "namespaceSelector": namespace_selector, "objectSelector": copy.deepcopy(object_selector),
            "clientConfig": copy.deepcopy(client),
            "admissionReviewVersions": list(selection.review_versions),
            "failurePolicy": selection.failure_policy, "matchPolicy": selection.match_policy,
            "sideEffects": selection.side_effects, "timeoutSeconds": selection.timeout_seconds}
        if selection.reinvocation_policy is not None:
            rendered["reinvocationPolicy"] = selection.reinvocation_policy
        return rendered

    if selection.consider_label_deployments_only:
        return [entry(keys.WEBHOOK_NAME, _SPEC_RESOURCES[:1], selection.consider_label),
                entry(f"statefulsets-hpas.{keys.WEBHOOK_NAME}", _SPEC_RESOURCES[1:], False)]
    return [entry(keys.WEBHOOK_NAME, _SPEC_RESOURCES, selection.consider_label)]


def render_webhook(*, ca_bundle: bytes, url: str | None = None, service: ServiceRef | None = None,
                   selection: Selection = SPEC) -> MutatingWebhook:
    """The (first) webhook entry of ``render_webhooks``."""
    return render_webhooks(ca_bundle=ca_bundle, url=url, service=service, selection=selection)[0]


def render_webhook_configuration(*, ca_bundle: bytes, url: str | None = None,
                                 service: ServiceRef | None = None, selection: Selection = SPEC,
                                 name: str = DEFAULT_CONFIGURATION_NAME) -> MutatingWebhookConfiguration:
    """The whole MutatingWebhookConfiguration (reinvocationPolicy unset: the default Never)."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": render_webhooks(ca_bundle=ca_bundle, url=url, service=service,
                                    selection=selection),
    }


# -- a vendor's own configuration ------------------------------------------------------------
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
               "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
               "finalizers")


def load_file(path: Path) -> dict[str, Any]:
    """A vendor's MutatingWebhookConfiguration (YAML or JSON); ConfigError names every problem."""
    try:
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (OSError, ValueError, yaml.YAMLError) as exc:  # ValueError: not UTF-8 text
        raise errors.ConfigError(f"webhook registration {path}: cannot read it as YAML or JSON "
                                 f"({str(exc).splitlines()[0]}): give your "
                                 "MutatingWebhookConfiguration") from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise errors.ConfigError(f"webhook registration {path}: must hold exactly one "
                                 "MutatingWebhookConfiguration (one YAML document)")
    found: dict[str, Any] = documents[0]
    problems = []
    if (found.get("apiVersion"), found.get("kind")) != ("admissionregistration.k8s.io/v1",
                                                       "MutatingWebhookConfiguration"):
        problems.append("apiVersion/kind must be admissionregistration.k8s.io/v1 "
                        f"MutatingWebhookConfiguration, got {found.get('apiVersion')!r}/"
                        f"{found.get('kind')!r}")
    webhooks = found.get("webhooks")
    if not isinstance(webhooks, list) or not webhooks:
        problems.append("webhooks must be a non-empty list of webhook entries")
    else:
        for index, webhook in enumerate(webhooks):
            if not isinstance(webhook, dict) or not isinstance(webhook.get("name"), str):
                problems.append(f"webhooks[{index}] must be a mapping with a name")
            elif not isinstance(webhook.get("clientConfig", {}), dict):
                problems.append(f"webhooks[{index}].clientConfig must be a mapping")
    if problems:
        raise errors.ConfigError(f"webhook registration {path}: " + "; ".join(problems))
    return found


def entry_path(webhook: Mapping[str, Any]) -> str:
    """The HTTP path an entry's clientConfig names (service.path or the url's); the spec's if none."""
    client = webhook.get("clientConfig") or {}
    service = client.get("service") or {}
    if service.get("path"):
        return str(service["path"])
    if client.get("url"):
        return urllib.parse.urlsplit(str(client["url"])).path or keys.WEBHOOK_PATH
    return keys.WEBHOOK_PATH


def adopt(vendor: Mapping[str, Any], *, name: str, ca_bundle: bytes, base_url: str,
          keep_service: bool = False) -> dict[str, Any]:
    """``vendor``'s configuration as the suite registers it (see the module docstring).

    ``base_url`` is ``https://host:port`` where the webhook is reached; each entry's url is it
    plus the entry's own path. ``keep_service``: an entry with a ``service`` keeps it (the
    webhook runs in the cluster), with ``ca_bundle``.
    """
    adopted: dict[str, Any] = copy.deepcopy(dict(vendor))
    metadata = {k: v for k, v in (adopted.get("metadata") or {}).items() if k not in _SERVER_SET}
    adopted["metadata"] = {**metadata, "name": name}
    bundle = base64.b64encode(ca_bundle).decode()
    for webhook in adopted["webhooks"]:
        client = webhook.get("clientConfig") or {}
        if keep_service and client.get("service"):
            webhook["clientConfig"] = {"service": client["service"], "caBundle": bundle}
        else:
            webhook["clientConfig"] = {"url": base_url.rstrip("/") + entry_path(webhook),
                                       "caBundle": bundle}
    return adopted
