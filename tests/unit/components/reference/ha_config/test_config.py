"""The rendered MutatingWebhookConfiguration is exactly the spec's §3 entry (harness form)."""

import base64
from pathlib import Path

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


VENDOR = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: acme-hac
  labels: {team: acme}
  uid: 1234
  resourceVersion: "99"
webhooks:
- name: high-availability-config.resources.gardener.cloud
  clientConfig:
    service: {name: acme, namespace: acme-system, path: /mutate, port: 443}
    caBundle: b2xk
  rules: [{apiGroups: [apps], apiVersions: [v1], resources: [deployments], operations: [CREATE]}]
  sideEffects: None
  admissionReviewVersions: [v1]
- name: other.acme.example
  clientConfig: {url: "https://elsewhere:8443/other"}
  sideEffects: None
  admissionReviewVersions: [v1]
"""


def test_vendor_file_is_adopted_with_the_suites_name_and_client_config(tmp_path: Path) -> None:
    path = tmp_path / "mwc.yaml"
    path.write_text(VENDOR)
    vendor = config.load_file(path)
    adopted = config.adopt(vendor, name="zp-run", ca_bundle=CA, base_url="https://10.0.0.1:2000")
    assert adopted["metadata"] == {"name": "zp-run", "labels": {"team": "acme"}}
    bundle = base64.b64encode(CA).decode()
    assert [w["clientConfig"] for w in adopted["webhooks"]] == [
        {"url": "https://10.0.0.1:2000/mutate", "caBundle": bundle},
        {"url": "https://10.0.0.1:2000/other", "caBundle": bundle}]
    assert adopted["webhooks"][0]["rules"] == vendor["webhooks"][0]["rules"], "judged, never fixed"
    kept = config.adopt(vendor, name="zp-run", ca_bundle=CA, base_url="https://x:1", keep_service=True)
    assert kept["webhooks"][0]["clientConfig"] == {
        "service": {"name": "acme", "namespace": "acme-system", "path": "/mutate", "port": 443},
        "caBundle": bundle}
    assert kept["webhooks"][1]["clientConfig"]["url"] == "https://x:1/other"
    assert vendor["metadata"]["name"] == "acme-hac", "the vendor's document is not modified"


@pytest.mark.parametrize(("text", "fragment"), [
    ("a: [", "cannot read it"),
    ("", "exactly one MutatingWebhookConfiguration"),
    ("kind: MutatingWebhookConfiguration\n---\nkind: X\n", "exactly one"),
    ("apiVersion: v1\nkind: ConfigMap\nwebhooks: [{name: a}]\n", "apiVersion/kind must be"),
    ("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n",
     "webhooks must be a non-empty list"),
    ("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
     "webhooks: [{clientConfig: {}}]\n", "webhooks[0] must be a mapping with a name"),
])
def test_bad_vendor_files_name_the_problem(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "mwc.yaml"
    path.write_text(text)
    with pytest.raises(errors.ConfigError, match=f"webhook registration {path}.*"
                       f"{fragment.replace('[', '.').replace(']', '.')}"):
        config.load_file(path)


def test_entry_path_defaults_to_the_spec_path() -> None:
    assert config.entry_path({}) == keys.WEBHOOK_PATH
    assert config.entry_path({"clientConfig": {"url": "https://h:1"}}) == keys.WEBHOOK_PATH
    assert config.entry_path({"clientConfig": {"url": "https://h:1/x"}}) == "/x"
    assert config.entry_path({"clientConfig": {"service": {"path": "/y"}}}) == "/y"


def test_broken_registrations_render_one_knob_each() -> None:
    split = config.render_webhooks(ca_bundle=CA, url="https://x", selection=config.Selection(
        consider_label_deployments_only=True))
    assert [w["namespaceSelector"] for w in split] == [
        {"matchLabels": {keys.LABEL_CONSIDER: "true"}}, {}]
    assert [r["resources"] for w in split for r in w["rules"]] == [
        ["deployments"], ["statefulsets"], ["horizontalpodautoscalers"]]
    scaled = config.render_webhook(ca_bundle=CA, url="https://x",
                                   selection=config.Selection(scale_subresource=True))
    assert scaled["rules"][0]["resources"] == ["deployments", "deployments/scale", "statefulsets",
                                               "statefulsets/scale"]
    assert config.render_webhook(ca_bundle=CA, url="https://x", selection=config.Selection(
        reinvocation_policy="IfNeeded"))["reinvocationPolicy"] == "IfNeeded"
