"""The component under test: sources, validation, argv, variants, one serialization form."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.components.harness import kinds, options
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.command import Command
from zoneproof.components.harness.sources.registered import Registered
from zoneproof.components.harness.sources.url import Url
from zoneproof.specs.ha_config import registration

WEBHOOK_COMMAND = "my-webhook --port {port} --tls-cert {cert_file} --tls-key {key_file}"
CONTROLLER_COMMAND = "my-controller --kubeconfig {kubeconfig} --id {identity}"
pytestmark = pytest.mark.usefixtures("vendor_programs")  # my-webhook, my-controller on PATH


def _every_source(tmp_path: Path) -> list[Component]:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("pem")
    return [Component(Kind.WEBHOOK), Component(Kind.CONTROLLER, Registered(variant="no-reconcile")),
            Component(Kind.WEBHOOK, Command(WEBHOOK_COMMAND)),
            Component(Kind.CONTROLLER, Command(CONTROLLER_COMMAND)),
            Component(Kind.WEBHOOK, Url("https://10.0.0.1:9443/x", bundle)),
            Component(Kind.WEBHOOK, registration_file=tmp_path / "mwc.yaml")]


def test_every_source_round_trips_through_json(tmp_path: Path) -> None:
    for made in _every_source(tmp_path):
        assert Component.from_dict(json.loads(json.dumps(made.to_dict()))) == made


def test_components_round_trip_and_default_to_the_reference(tmp_path: Path) -> None:
    chosen = Components(controller=Component(Kind.CONTROLLER, Command(CONTROLLER_COMMAND)))
    assert Components.from_dict(chosen.to_json()) == chosen
    assert Components.from_dict(chosen.to_dict()) == chosen
    assert Components.from_dict(None) == Components.from_dict("") == Components.from_dict({}) \
        == Components()
    assert Components().webhook.source == Registered("reference", "reference")
    assert Components.from_dict({"controller": {"variant": "graceful-delete"}}).controller.variant \
        == "graceful-delete"


@pytest.mark.parametrize(("data", "message"), [
    ({"source": "helm"}, "source 'helm' is unknown: choose one of registered, command, url"),
    ({"source": "command", "template": "x"}, "unknown key(s) template of a command component: "
                                             "valid keys are kind, source, command"),
    ({"source": "url", "url": "https://x"}, "a url component needs ca_bundle"),
    ({"kind": "controller"}, "component kind 'controller': expected webhook"),
    ("not a mapping", "a component is a mapping"),
])
def test_bad_dicts_name_the_fix(data: object, message: str) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        Component.from_dict(data, Kind.WEBHOOK)  # type: ignore[arg-type]
    assert message in str(caught.value)


@pytest.mark.parametrize("data", ['{"webhook": ', '{"operator": {}}', "[1]"])
def test_bad_components_are_refused(data: str) -> None:
    with pytest.raises(errors.ConfigError, match="components"):
        Components.from_dict(data)


def test_unknown_placeholder_error_names_the_valid_ones() -> None:
    found = Component(Kind.WEBHOOK, Command(WEBHOOK_COMMAND + " --zone {zone}")).problems()
    assert found == ["webhook command has unknown placeholder(s) {zone}: use {python}, "
                     "{kubeconfig}, {host}, {port}, {cert_file}, {key_file}"]
    (variant,) = Component(Kind.CONTROLLER, Command(CONTROLLER_COMMAND + " {variant}")).problems()
    assert "{variant} belongs to registered implementations" in variant  # noqa: RUF027
    assert "{lease_duration}" in variant


def test_a_command_must_use_what_the_suite_chooses() -> None:
    (found,) = Component(Kind.WEBHOOK, Command("my-webhook --port {port}")).problems()
    assert found.startswith("webhook command must use {cert_file}, {key_file}")
    assert Component(Kind.CONTROLLER, Command("c {identity}")).problems() == [
        "controller command must use {kubeconfig} (the suite chooses them); placeholders: "
        + kinds.placeholders(Kind.CONTROLLER)]
    (malformed,) = Component(Kind.CONTROLLER, Command(CONTROLLER_COMMAND + " {")).problems()
    assert "malformed" in malformed and "{{" in malformed


def test_url_problems(tmp_path: Path) -> None:
    found = Component(Kind.CONTROLLER, Url("http://x", tmp_path / "none.pem")).problems()
    assert found == ["a controller cannot be reached by URL: give a command",
                     "webhook URL 'http://x' must be https:// (admission requires TLS)",
                     f"webhook URL needs the PEM CA bundle that signed its serving certificate; "
                     f"{tmp_path / 'none.pem'} is not a file"]


MWC = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: acme}
webhooks: [{name: high-availability-config.resources.gardener.cloud, sideEffects: None,
            admissionReviewVersions: [v1]}]
"""


def test_a_webhook_may_bring_its_registration_file(tmp_path: Path) -> None:
    path = tmp_path / "mwc.yaml"
    path.write_text(MWC)
    chosen = options.from_choices(Kind.WEBHOOK, command=WEBHOOK_COMMAND, registration=str(path))
    assert chosen.registration_file == path
    assert Component.from_dict(chosen.to_dict()) == chosen
    assert options.from_choices(Kind.WEBHOOK, registration=str(path)).variant == "reference"


def test_bad_registration_files_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="mwc.yaml is not a file: give the path"):
        Component(Kind.WEBHOOK, registration_file=tmp_path / "mwc.yaml").validate()
    (tmp_path / "bad.yaml").write_text("kind: ConfigMap\n")
    with pytest.raises(errors.ConfigError, match="apiVersion/kind must be"):
        Component(Kind.WEBHOOK, registration_file=tmp_path / "bad.yaml").validate()
    (tmp_path / "mwc.yaml").write_text(MWC)
    with pytest.raises(errors.ConfigError, match="only a webhook is registered"):
        Component(Kind.CONTROLLER, registration_file=tmp_path / "mwc.yaml").validate()
    with pytest.raises(errors.ConfigError, match="webhook-registration belongs to the webhook"):
        options.from_choices(Kind.CONTROLLER, registration=str(tmp_path / "mwc.yaml"))


def test_unknown_variant_lists_the_registered_ones() -> None:
    with pytest.raises(errors.ConfigError, match="choose one of reference, acts-on-recovery"):
        Component(Kind.CONTROLLER, Registered(variant="nope")).validate()


def test_argv_fills_and_quotes_the_placeholders() -> None:
    made = Component(Kind.CONTROLLER, Command("{python} ctl --kubeconfig {kubeconfig} "
                                              "--id {identity} --selector {selector}"))
    argv = made.argv({"python": sys.executable, "kubeconfig": Path("/a b/kc"), "identity": "zp-0",
                      "selector": "app=x,tier in (a, b)"}, ("--extra", "1"))
    assert argv == [sys.executable, "ctl", "--kubeconfig", "/a b/kc", "--id", "zp-0",
                    "--selector", "app=x,tier in (a, b)", "--extra", "1"]


def test_a_registered_component_starts_its_variant() -> None:
    argv = Component(Kind.WEBHOOK, Registered(variant="no-tolerations")).argv(
        {"python": "py", "kubeconfig": "kc", "host": "h", "port": 1, "cert_file": "c",
         "key_file": "k"})
    assert argv[:3] == ["py", "-m", "zoneproof.components.reference.ha_config"]
    assert argv[-2:] == ["--variant", "no-tolerations"]


def test_argv_of_an_external_webhook_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("pem")
    with pytest.raises(errors.ConfigError, match="runs elsewhere"):
        Component(Kind.WEBHOOK, Url("https://x", tmp_path / "ca.pem")).argv({})


def test_selection_comes_from_the_registered_variant_else_the_spec() -> None:
    broken = Component(Kind.WEBHOOK, Registered(variant="create-only")).selection()
    assert broken == registration.Selection(on_update=False)
    assert Component(Kind.WEBHOOK).selection() == registration.SPEC
    assert Component(Kind.WEBHOOK, Command(WEBHOOK_COMMAND)).selection() == registration.SPEC


def test_variants_only_where_the_source_has_them() -> None:
    reference = Component(Kind.CONTROLLER)
    assert reference.cannot_be("graceful-delete") is None
    assert reference.with_variant("graceful-delete").variant == "graceful-delete"
    assert "has no variant 'nope'" in str(reference.cannot_be("nope"))
    vendor = Component(Kind.CONTROLLER, Command(CONTROLLER_COMMAND))
    reason = vendor.cannot_be("graceful-delete")
    assert reason is not None and "has no variants: register it" in reason
    with pytest.raises(errors.ConfigError, match="zoneproof.components"):
        vendor.with_variant("graceful-delete")


def test_from_choices(tmp_path: Path, ca_bundle: Path) -> None:
    assert options.from_choices(Kind.WEBHOOK) == Component(Kind.WEBHOOK)
    assert options.from_choices(Kind.WEBHOOK, variant="no-tolerations").variant == "no-tolerations"
    vendor = options.from_choices(Kind.CONTROLLER, command=CONTROLLER_COMMAND)
    assert vendor.source == Command(CONTROLLER_COMMAND)
    url = options.from_choices(Kind.WEBHOOK, url="https://x", ca_bundle=str(ca_bundle))
    assert url.external and url.source == Url("https://x", tmp_path / "ca.pem")


@pytest.mark.parametrize(("choices", "message"), [
    ({"command": WEBHOOK_COMMAND, "url": "https://x"}, "--webhook-command and --webhook-url both"),
    ({"command": WEBHOOK_COMMAND, "variant": "no-tolerations"},
     "--webhook-variant names a variant of the reference webhook; with --webhook-command"),
    ({"url": "https://x"}, "--webhook-url needs --webhook-ca-bundle FILE"),
    ({"ca_bundle": "ca.pem"}, "--webhook-ca-bundle belongs to --webhook-url"),
    ({"variant": "nope"}, "unknown webhook variant 'nope'"),
])
def test_conflicting_choices_name_the_options(choices: dict[str, str], message: str) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        options.from_choices(Kind.WEBHOOK, flag="--", **choices)
    assert message in str(caught.value)


def test_components_refuse_the_wrong_kinds() -> None:
    with pytest.raises(errors.ConfigError, match="wrong kinds"):
        Components(webhook=Component(Kind.CONTROLLER))
