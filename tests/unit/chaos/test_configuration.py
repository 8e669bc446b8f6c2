"""Reading zoneproof's keys of an experiment configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.command import Command


def test_defaults_without_configuration() -> None:
    s = ExperimentConfig.from_configuration(None)
    assert (s.backend, s.cluster, s.namespace, s.slos) == ("local", "zoneproof", "zp-chaos", ())
    assert (s.lease_namespace, s.lease_name) == ("default", "zoneproof-ha-controller")
    assert s.workdir is None and s.kubeconfig is None and not s.allow_destructive
    assert s.slo_set.source is None and s.slo_set.get("lease-failover").max > 0


def test_values_and_slo_forms() -> None:
    s = ExperimentConfig.from_configuration({
        "zoneproof_cluster": "bed", "zoneproof_slos": "a, b", "zoneproof_workdir": "/tmp/x",
        "zoneproof_allow_destructive": "true", "zoneproof_lease": "ns/name", "other": 1})
    assert s.cluster == "bed" and s.slos == ("a", "b") and s.workdir == Path("/tmp/x")
    assert s.allow_destructive and (s.lease_namespace, s.lease_name) == ("ns", "name")
    assert ExperimentConfig.from_configuration({"zoneproof_slos": ["x"]}).slos == ("x",)


def test_components_come_from_the_configuration() -> None:
    assert ExperimentConfig.from_configuration(None).components == Components()
    vendor = Components(webhook=Component(Kind.WEBHOOK, Command(
        "{python} -m hook --port {port} --cert {cert_file} --key {key_file}")))
    for form in (vendor.to_dict(), vendor.to_json()):  # a YAML mapping or --var JSON
        assert ExperimentConfig.from_configuration({"zoneproof_components": form}).components == vendor


@pytest.mark.parametrize("conf, text", [
    ({"zoneproof_lease": "no-slash"}, "NAMESPACE/NAME"),
    ({"zoneproof_slos": [1, 2]}, "list of SLO names"),
    ({"zoneproof_slo_file": "/nonexistent/slos.yaml"}, "zoneproof_slo_file: invalid SLO file"),
    ({"zoneproof_components": {"controller": {"variant": "nope"}}},
     "zoneproof_components: unknown controller variant 'nope'"),
    ({"zoneproof_components": "{"}, "zoneproof_components: components are not valid JSON"),
])
def test_bad_values_name_the_key(conf: dict[str, object], text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        ExperimentConfig.from_configuration(conf)
