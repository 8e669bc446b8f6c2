"""The certification profile: the sample loads; every bad key or value is listed, with its fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from zoneproof import errors
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.sources.command import Command
from zoneproof.components.harness.sources.registered import Registered
from zoneproof.components.harness.sources.url import Url
from zoneproof.suites import profile, qualify

SAMPLE = qualify.repo_root() / "certification" / "profile.example.yaml"


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def _base() -> dict[str, object]:
    data = yaml.safe_load(SAMPLE.read_text())
    assert isinstance(data, dict)
    return data


def _problems(tmp_path: Path, data: object) -> str:
    with pytest.raises(errors.ConfigError) as caught:
        profile.load(_write(tmp_path, data))
    return str(caught.value)


def test_the_sample_profile_loads() -> None:
    loaded = profile.load(SAMPLE)
    assert loaded.vendor.product == "zoneproof reference HA pair"
    assert loaded.components.webhook.source == Registered()
    assert loaded.scope.pytest_args() == ["--zp-controller-selector=app=noobaa",
                                          "--zp-controller-lease=default/zoneproof-ha-controller"]
    assert loaded.backend.name == "local" and loaded.backend.cluster_name == "zoneproof-certify"
    assert loaded.slo_file is None


def test_vendor_commands_and_urls_with_paths_relative_to_the_profile(tmp_path: Path,
                                                                     ca_bundle: Path) -> None:
    (tmp_path / "slo.yaml").write_text("apiVersion: zoneproof.dev/v1\nkind: SloSet\nslos: []\n")
    data = _base()
    data["components"] = {
        "webhook": {"source": "url", "url": "https://127.0.0.1:8443/mutate", "ca_bundle": "ca.pem"},
        "controller": {"source": "command", "command": "{python} -m acme --kubeconfig {kubeconfig} "
                       "--id {identity}", "selector": "app=acme", "lease": "acme/leader"}}
    data["slo"] = "slo.yaml"
    loaded = profile.load(_write(tmp_path, data))
    assert loaded.components.webhook.source == Url("https://127.0.0.1:8443/mutate",
                                                   (tmp_path / "ca.pem").resolve())
    assert isinstance(loaded.components.controller.source, Command)
    assert loaded.scope.of("controller")["selector"] == "app=acme"
    assert loaded.scope.of("controller")["lease"] == "acme/leader"
    assert loaded.slo_file == (tmp_path / "slo.yaml").resolve()


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    data = _base()
    data["vendr"] = "typo"
    del data["contact"]
    data["apiVersion"] = "zoneproof.dev/v0"
    data["components"] = {
        "webhook": {"source": "in-cluster", "manifests": "a", "image_archive": "a.tar"},
        "controller": {"source": "command", "command": "./bin/ctl --kubeconfig {kubeconfig} "
                       "--id {identity} --lease {leas}", "lease": "no-slash", "namespaces": "a,b"}}
    data["slo"] = "missing-slo.yaml"
    data["backend"] = {"name": "existing"}
    text = _problems(tmp_path, data)
    for expected in [
        "unknown key 'vendr' (did you mean 'vendor'?)",
        "contact: missing",
        "apiVersion: 'zoneproof.dev/v0' is not supported: write zoneproof.dev/v1",
        "components.webhook: in-cluster webhook manifests",
        "have no kustomization.yaml",
        "components: components in-cluster: the existing backend cannot load image archives",
        "use backend.name kind, or components host",
        "components.controller: controller command has unknown placeholder(s) {leas}",
        f"the program './bin/ctl' is a relative path; the suite runs from the zoneproof checkout: "
        f"write {(tmp_path / 'bin' / 'ctl').resolve()}",
        "components.controller.lease: 'no-slash' must be NAMESPACE/NAME",
        "components.controller.namespaces: 'a,b' is not supported",
        "slo: ", "missing-slo.yaml is not a file",
        "backend.kubeconfig: the existing backend needs the cluster's kubeconfig",
    ]:
        assert expected in text, f"{expected!r} not in:\n{text}"
    assert "has 12 problem(s)" in text


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(kind="Profile"), "kind: 'Profile' is not supported: write CertificationProfile"),
    (lambda d: d.update(components={}), "components: name at least one component under test"),
    (lambda d: d.update(components={**d["components"], "gateway": {}}),
     "components: unknown key 'gateway'"),
    (lambda d: d["components"]["webhook"].update(variant="nope"), "unknown webhook variant 'nope'"),
    (lambda d: d["components"]["webhook"].update(selector="x"),
     "components.webhook: unknown key 'selector'; valid keys: source"),
    (lambda d: d["components"].update(controller={"source": "url", "url": "https://x",
                                                  "ca_bundle": "/dev/null"}),
     "a controller cannot be reached by URL"),
    (lambda d: d["components"].update(webhook={"source": "command", "command": "nonexistent-acme "
                                               "--port {port} {cert_file} {key_file}"}),
     "'nonexistent-acme' is not an executable file nor on PATH"),
    (lambda d: d.update(backend={"name": "nope"}), "backend.name: 'nope' is not installed"),
    (lambda d: d.update(backend={"name": "local", "allow_destructive": "yes"}),
     "backend.allow_destructive: true or false"),
    (lambda d: d.update(backend={"name": "local", "optons": {}}),
     "unknown key 'optons' (did you mean 'options'?)"),
    (lambda d: d.update(backend={"name": "local", "options": {"bogus": "1"}}), "backend: "),
    (lambda d: d.update(version=""), "version: give a non-empty string"),
])
def test_one_bad_value_names_its_fix(tmp_path: Path, edit: object, message: str) -> None:
    data = _base()
    edit(data)  # type: ignore[operator]
    assert message in _problems(tmp_path, data)


@pytest.mark.parametrize(("text", "message"), [
    ("- a list", "must be a mapping"), ("a: [unclosed", "is not valid YAML")])
def test_not_a_profile(tmp_path: Path, text: str, message: str) -> None:
    assert message in _problems(tmp_path, text)


def test_a_missing_profile_is_named(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="No such file"):
        profile.load(tmp_path / "nope.yaml")


@pytest.mark.parametrize("named", ["webhook", "controller"])
def test_one_component_alone_the_reference_stands_in_for_the_other(tmp_path: Path,
                                                                   named: str) -> None:
    data = _base()
    data["components"] = {named: data["components"][named]}  # type: ignore[index]
    loaded = profile.load(_write(tmp_path, data))
    (other,) = loaded.stand_ins
    assert loaded.under_test == (named,) and other != named
    assert loaded.components[other] == Component(other)
    assert loaded.scope.pytest_args() == ["--zp-controller-selector=app=noobaa",
                                          "--zp-controller-lease=default/zoneproof-ha-controller"]


def test_an_in_cluster_controllers_lease_is_its_manifests(tmp_path: Path) -> None:
    data = _base()
    data["components"] = {"controller": {"source": "in-cluster"}}
    data["backend"] = {"name": "kind"}
    loaded = profile.load(_write(tmp_path, data))
    assert loaded.scope.of("controller")["lease"] == "zoneproof-system/zoneproof-ha-controller"


@pytest.mark.parametrize(("controller", "message"), [
    ({"selector": "app in (("}, "components.controller.selector: selector 'app in ((' is not "
                                "equality-based"),
    ({"lease": "Default/x"}, "components.controller.lease: 'Default/x' must be NAMESPACE/NAME"),
    ({"source": "command", "command": "/etc/passwd {kubeconfig} {identity}"},
     "'/etc/passwd' is not executable: chmod +x /etc/passwd"),
])
def test_bad_settings_and_programs_are_refused_up_front(tmp_path: Path, controller: dict[str, str],
                                                         message: str) -> None:
    data = _base()
    given = data["components"]["controller"]  # type: ignore[index]
    data["components"]["controller"] = controller if "source" in controller else {  # type: ignore[index]
        **given, **controller}
    assert message in _problems(tmp_path, data)
