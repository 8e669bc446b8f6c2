"""The DNS outage: its kind, and the count kept on CoreDNS until it is given back (the
scaling itself and its effect run live on kind: chaos/dns-outage.yaml), and the run that
holds it until given back."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import reaping
from zoneproof.cluster import cluster_dns
from zoneproof.faults import registry
from zoneproof.faults.effects import Effect


class FakeApps:
    """The two calls cluster_dns makes, on one Deployment (None: the cluster has none)."""

    def __init__(self, replicas: int | None) -> None:
        self.replicas, self.annotations = replicas, {}

    def read_namespaced_deployment(self, name: str, namespace: str) -> Any:
        if self.replicas is None:
            raise client.ApiException(status=404)
        return SimpleNamespace(metadata=SimpleNamespace(annotations=dict(self.annotations)),
                               spec=SimpleNamespace(replicas=self.replicas))

    def patch_namespaced_deployment(self, name: str, namespace: str, body: Any) -> None:
        assert (namespace, name) == cluster_dns.COREDNS
        for key, value in body["metadata"]["annotations"].items():
            if value is None:
                self.annotations.pop(key, None)
            else:
                self.annotations[key] = value
        self.replicas = body["spec"]["replicas"]


def test_the_kind_is_registered_with_its_effect_and_needs() -> None:
    kind = registry.kinds()["dns-outage"]
    assert kind.effects == {Effect.NAMES_UNRESOLVED}
    assert {c.value for c in kind.requires} == {"cluster-dns", "destructive"}
    with pytest.raises(errors.ConfigError, match="unknown parameters"):
        registry.build("dns-outage", {"zone": "zone-a"})


def test_the_count_is_kept_until_it_is_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    apps = FakeApps(2)
    monkeypatch.setattr(client, "AppsV1Api", lambda api=None: apps)
    cluster_dns.take_down(apps, cluster_dns.read(apps, "t"))  # type: ignore[arg-type]
    assert apps.replicas == 0 and apps.annotations == {cluster_dns.REPLICAS_ANNOTATION: "2"}
    cluster_dns.take_down(apps, cluster_dns.read(apps, "t"))  # type: ignore[arg-type]
    assert apps.annotations[cluster_dns.REPLICAS_ANNOTATION] == "2", "a second take-down keeps 2"
    assert cluster_dns.restore(client.ApiClient()) == 2
    assert apps.replicas == 2 and apps.annotations == {}
    assert cluster_dns.restore(client.ApiClient()) is None, "nothing left to give back"


def test_a_cluster_without_coredns_is_refused_and_needs_no_restore(
        monkeypatch: pytest.MonkeyPatch) -> None:
    apps = FakeApps(None)
    monkeypatch.setattr(client, "AppsV1Api", lambda api=None: apps)
    with pytest.raises(errors.FaultError, match="no cluster DNS Deployment kube-system/coredns"):
        cluster_dns.read(apps, "dns-outage")  # type: ignore[arg-type]
    assert cluster_dns.restore(client.ApiClient()) is None


@pytest.fixture
def a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> runs.Run:
    """A run of its own (no keeper), in a state root of its own."""
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.delenv(reaping.RUN_ENV, raising=False)
    monkeypatch.setattr(runs, "_current", runs._Current())
    return runs.open_run("test", keeper=False)


@pytest.mark.parametrize("reverted", [True, False])
def test_a_run_that_took_coredns_down_gives_it_back_when_reaped(
        reverted: bool, a_run: runs.Run, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The take-down is held by the run: a revert releases it; a run that ends (or is
    killed) with it in force gives CoreDNS back before anything else is undone."""
    apps = FakeApps(2)
    monkeypatch.setattr(client, "AppsV1Api", lambda api=None: apps)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setattr(cluster_dns.kube, "teardown_client", lambda path: client.ApiClient())
    cluster_dns.hold(kubeconfig)
    cluster_dns.take_down(apps, cluster_dns.read(apps, "t"))  # type: ignore[arg-type]
    assert [h["kind"] for h in a_run.holdings()] == [cluster_dns.HOLDING]
    assert cluster_dns.HOLDING in runs.REVERTS_FAULTS
    if reverted:
        cluster_dns.restore(client.ApiClient())
        cluster_dns.release(kubeconfig)
        assert a_run.holdings() == []
    said: list[str] = []
    assert runs.close(said.append) == []
    assert apps.replicas == 2 and apps.annotations == {}
    assert any("given back its 2 replicas" in line for line in said) is not reverted
