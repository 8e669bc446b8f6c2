"""Component sources as values: the registry, one dict form, the one way each starts, and
the bad sources refused up front with the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zoneproof import errors
from zoneproof.components.harness import kinds, source
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.source import Where, Workloads
from zoneproof.components.harness.sources.command import Command
from zoneproof.components.harness.sources.in_cluster import InCluster
from zoneproof.components.harness.sources.registered import Registered
from zoneproof.components.harness.sources.url import Url


def test_the_registry_holds_every_source_host_ones_first() -> None:
    assert source.names() == ("registered", "command", "url", "in-cluster")
    assert source.get("url") is Url
    assert source.default(Where.HOST) is Registered and source.default(Where.IN_CLUSTER) is InCluster
    with pytest.raises(errors.ConfigError, match="'helm' is unknown: choose one of registered, "
                                                 "command, url, in-cluster"):
        source.get("helm")


def test_every_kind_is_registered_with_what_the_suite_needs() -> None:
    assert kinds.every() == (Kind.WEBHOOK, Kind.CONTROLLER)
    assert kinds.get("controller") is Kind.CONTROLLER and Kind.WEBHOOK.spec.serves
    root = Path(__file__).resolve().parents[4]
    assert all(k.spec.manifests.is_dir() and all((root / d).is_dir() for d in k.spec.conformance)
               for k in kinds.every())
    with pytest.raises(errors.ConfigError, match="expected webhook or controller"):
        kinds.get("operator")


class _Launcher:
    """Records which way a source started its component."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def process(self, component: Component) -> str:
        self.calls.append(("process", component.template.split()[0]))
        return "process"

    def endpoint(self, component: Component, url: str, ca_bundle: bytes) -> str:
        self.calls.append(("endpoint", url, ca_bundle))
        return "endpoint"

    def workloads(self, component: Component, workloads: Workloads) -> str:
        self.calls.append(("workloads", workloads.describe()))
        return "workloads"


def test_each_source_starts_its_one_way(tmp_path: Path, ca_bundle: Path) -> None:
    launcher = _Launcher()
    made = [Component(Kind.CONTROLLER), Component(Kind.WEBHOOK, Command("/bin/hook {port} "
                                                                         "{cert_file} {key_file}")),
            Component(Kind.WEBHOOK, Url("https://w:1/x", ca_bundle)),
            Component(Kind.CONTROLLER, InCluster(tmp_path))]
    assert [m.start(launcher) for m in made] == ["process", "process", "endpoint", "workloads"]
    assert launcher.calls == [("process", "{python}"), ("process", "/bin/hook"),
                              ("endpoint", "https://w:1/x", ca_bundle.read_bytes()),
                              ("workloads", {"manifests": str(tmp_path)})]


def test_where_they_run_and_what_they_fix(tmp_path: Path) -> None:
    in_cluster = Component(Kind.CONTROLLER, InCluster(Kind.CONTROLLER.spec.manifests))
    assert in_cluster.where is Where.IN_CLUSTER and in_cluster.mode == "in-cluster"
    assert in_cluster.fixed() == {"lease": "zoneproof-system/zoneproof-ha-controller"}
    assert not in_cluster.runs_command and in_cluster.template == ""
    assert Component(Kind.CONTROLLER).fixed() == {} and Component(Kind.CONTROLLER).runs_command
    assert Component(Kind.WEBHOOK, Url("https://x", tmp_path)).external


@pytest.mark.parametrize("made", [
    Component(Kind.WEBHOOK, Registered("reference", "create-only")),
    Component(Kind.CONTROLLER, Command("{python} c {kubeconfig} {identity}")),
    Component(Kind.WEBHOOK, Url("https://x:1/p", Path("/ca.pem"))),
    Component(Kind.CONTROLLER, InCluster(Path("/m"), Path("/a.tar"))),
    Component(Kind.CONTROLLER, InCluster(Kind.CONTROLLER.spec.manifests, None, "no-reconcile")),
], ids=lambda c: c.source.name)
def test_every_source_round_trips_its_keys(made: Component) -> None:
    data = json.loads(json.dumps(made.to_dict()))
    assert set(data) <= {"kind", "source", *type(made.source).keys()}
    assert Component.from_dict(data) == made


# -- refused up front, with the fix ----------------------------------------------------------
def test_a_command_whose_program_is_missing_or_not_executable(tmp_path: Path) -> None:
    (missing,) = Command("acme-hook-nowhere {port} {cert_file} {key_file}").problems(Kind.WEBHOOK)
    assert missing == ("webhook command: 'acme-hook-nowhere' is not an executable file nor on "
                       "PATH: install it or give its absolute path")
    program = tmp_path / "hook"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o644)
    (plain,) = Command(f"{program} {{port}} {{cert_file}} {{key_file}}").problems(Kind.WEBHOOK)
    assert plain == f"webhook command: '{program}' is not executable: chmod +x {program}"
    program.chmod(0o755)
    assert Command(f"{program} {{port}} {{cert_file}} {{key_file}}").problems(Kind.WEBHOOK) == []
    (relative,) = Command("./bin/ctl {kubeconfig} {identity}").problems(Kind.CONTROLLER)
    assert "is a relative path" in relative and str(Path("bin/ctl").resolve()) in relative
    assert Command("{python} -m acme {kubeconfig} {identity}").problems(Kind.CONTROLLER) == []


def test_a_ca_bundle_that_is_not_pem(tmp_path: Path, ca_bundle: Path) -> None:
    (tmp_path / "junk.pem").write_bytes(b"\x00\x01 not a certificate")
    (found,) = Url("https://x", tmp_path / "junk.pem").problems(Kind.WEBHOOK)
    assert found.startswith(f"webhook CA bundle {tmp_path / 'junk.pem'} is not PEM certificates")
    assert "\n" not in found and "-----BEGIN CERTIFICATE-----" in found
    assert Url("https://x", ca_bundle).problems(Kind.WEBHOOK) == []


def test_a_registration_file_that_does_not_parse(tmp_path: Path) -> None:
    for name, content in (("binary.yaml", b"\xff\xfe\x00garbage"), ("broken.yaml", b"a: [b")):
        (tmp_path / name).write_bytes(content)
        (found,) = Component(Kind.WEBHOOK, registration_file=tmp_path / name).problems()
        assert f"webhook registration {tmp_path / name}: cannot read it as YAML or JSON" in found
        assert found.endswith("give your MutatingWebhookConfiguration") and "\n" not in found


@pytest.mark.parametrize(("value", "message"), [
    ("app in ((", "is not equality-based (k=v,...)"),
    ("app=a=b", "app=a=b is not a valid label"),
    ("", "give a label selector (e.g. app=noobaa)"),
])
def test_a_selector_the_suite_cannot_make_labels_for(value: str, message: str) -> None:
    (selector,) = [o for o in Kind.CONTROLLER.spec.settings if o.key == "selector"]
    assert message in (selector.problem(value) or "")
    assert selector.problem("app=noobaa, tier==db") is None


@pytest.mark.parametrize("value", ["no-slash", "a/b/c", "/name", "Default/lease", "ns/Bad_Name"])
def test_a_lease_not_namespace_slash_name(value: str) -> None:
    (lease,) = [o for o in Kind.CONTROLLER.spec.settings if o.key == "lease"]
    assert f"{value!r} must be NAMESPACE/NAME" in (lease.problem(value) or "")
    assert lease.problem("zoneproof-system/zoneproof-ha-controller") is None
