"""The rendered MutatingWebhookConfiguration is exactly the spec's §3 entry (harness form)."""

import base64

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_config import variants
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config import registration as config

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def test_url_configuration_matches_the_spec() -> None:
    url = config.webhook_url("127.0.0.1", 9449)
    rendered = config.render_webhook_configuration(ca_bundle=CA, url=url)
    assert rendered["apiVersion"] == "admissionregistration.k8s.io/v1"
    assert rendered["kind"] == "MutatingWebhookConfiguration"
    assert rendered["webhooks"] == [{
        "name": "high-availability-config.resources.gardener.cloud",
        "rules": [
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments", "statefulsets"],
             "operations": ["CREATE", "UPDATE"]},
            {"apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"],
             "operations": ["CREATE", "UPDATE"]}],
        "namespaceSelector": {
            "matchLabels": {"high-availability-config.resources.gardener.cloud/consider": "true"}},
        "objectSelector": {"matchExpressions": [
            {"key": "high-availability-config.resources.gardener.cloud/skip", "operator": "DoesNotExist"}]},
        "clientConfig": {"caBundle": base64.b64encode(CA).decode(),
                         "url": "https://127.0.0.1:9449/webhooks/high-availability-config"},
        "admissionReviewVersions": ["v1beta1", "v1"],
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": 10,
    }]
    assert "reinvocationPolicy" not in rendered["webhooks"][0]


def test_service_client_config() -> None:
    webhook = config.render_webhook(ca_bundle=CA, service=config.ServiceRef("hac", "zoneproof", 8443))
    assert webhook["clientConfig"]["service"] == {"name": "hac", "namespace": "zoneproof",
                                                  "path": keys.WEBHOOK_PATH, "port": 8443}
    assert "url" not in webhook["clientConfig"]


def test_ipv6_url_is_bracketed() -> None:
    assert config.webhook_url("::1", 1) == "https://[::1]:1/webhooks/high-availability-config"


@pytest.mark.parametrize("kwargs", [{}, {"url": "https://x", "service": config.ServiceRef("a", "b")}])
def test_exactly_one_target(kwargs: dict[str, object]) -> None:
    with pytest.raises(errors.ConfigError, match="exactly one"):
        config.render_webhook(ca_bundle=CA, **kwargs)  # type: ignore[arg-type]


def test_empty_ca_bundle_is_refused() -> None:
    with pytest.raises(errors.ConfigError, match="ca_bundle"):
        config.render_webhook(ca_bundle=b"  ", url="https://x")


@pytest.mark.parametrize(("variant", "field", "value"), [
    ("ignores-namespace-label", "namespaceSelector", {}),
    ("mutates-skipped", "objectSelector", {}),
])
def test_selection_variants_render_broken_selectors(variant: str, field: str, value: object) -> None:
    selection = variants.selection(variants.get_variant(variant))
    webhook = config.render_webhook(ca_bundle=CA, url="https://x", selection=selection)
    assert webhook[field] == value  # type: ignore[literal-required]


def test_create_only_variant_drops_update() -> None:
    variant = variants.get_variant("create-only")
    webhook = config.render_webhook(ca_bundle=CA, url="https://x", selection=variants.selection(variant))
    assert [rule["operations"] for rule in webhook["rules"]] == [["CREATE"], ["CREATE"]]
