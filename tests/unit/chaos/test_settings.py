"""Reading zoneproof's keys of an experiment configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.chaos.settings import Settings


def test_defaults_without_configuration() -> None:
    s = Settings.from_configuration(None)
    assert (s.backend, s.cluster, s.namespace, s.slos) == ("local", "zoneproof", "zp-chaos", ())
    assert (s.lease_namespace, s.lease_name) == ("default", "zoneproof-ha-controller")
    assert s.workdir is None and s.kubeconfig is None and not s.allow_destructive
    assert s.slo_set.source is None and s.slo_set.get("lease-failover").max > 0


def test_values_and_slo_forms() -> None:
    s = Settings.from_configuration({
        "zoneproof_cluster": "bed", "zoneproof_slos": "a, b", "zoneproof_workdir": "/tmp/x",
        "zoneproof_allow_destructive": "true", "zoneproof_lease": "ns/name", "other": 1})
    assert s.cluster == "bed" and s.slos == ("a", "b") and s.workdir == Path("/tmp/x")
    assert s.allow_destructive and (s.lease_namespace, s.lease_name) == ("ns", "name")
    assert Settings.from_configuration({"zoneproof_slos": ["x"]}).slos == ("x",)


@pytest.mark.parametrize("conf, text", [
    ({"zoneproof_lease": "no-slash"}, "NAMESPACE/NAME"),
    ({"zoneproof_slos": [1, 2]}, "list of SLO names"),
    ({"zoneproof_slo_file": "/nonexistent/slos.yaml"}, "zoneproof_slo_file: invalid SLO file"),
])
def test_bad_values_name_the_key(conf: dict[str, object], text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        Settings.from_configuration(conf)
