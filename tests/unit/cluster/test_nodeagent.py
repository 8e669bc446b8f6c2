"""The node agent's install manifests, image choice, blast radius, switch renewals, and its
install as a holding of the run (no cluster)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from zoneproof import runs
from zoneproof._util import reaping
from zoneproof.binaries.images import recipe
from zoneproof.cluster import existing, facets, nodeagent
from zoneproof.cluster.existing import AgentCluster, ExistingBackend, ExistingCluster, blast_radius
from zoneproof.cluster.interface import Capability
from zoneproof.cluster.spec import ClusterSpec, Timings
from zoneproof.nodeagent.protocol import NAMESPACE, SWITCH_LEASE
from zoneproof.runs import sweep


def test_manifests_run_the_chosen_image_privileged_on_every_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(nodeagent.IMAGE_ENV, raising=False)
    assert nodeagent.image() == f"localhost/zoneproof/node-agent:{recipe.DEFAULT_TAG}"
    monkeypatch.setenv(nodeagent.IMAGE_ENV, "registry.example/agent:1")
    objects = nodeagent.manifests(nodeagent.image())
    assert {o["kind"] for o in objects} == {"Namespace", "ServiceAccount", "Role", "RoleBinding",
                                            "DaemonSet"}
    assert {o["metadata"].get("namespace", NAMESPACE) for o in objects} == {NAMESPACE}
    pod = next(o for o in objects if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "registry.example/agent:1"
    assert pod["hostPID"] is True and pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["containers"][0]["securityContext"]["privileged"] is True


def test_blast_radius_lists_every_node_by_zone() -> None:
    text = blast_radius({"": ["cp"], "zone-a": ["a1", "a2"], "zone-b": ["b1"]})
    assert "any of these 4 nodes" in text
    assert "(no zone label): cp" in text and "zone-a: a1, a2" in text and "zone-b: b1" in text


class FakeLeases:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def patch_namespaced_lease(self, name: str, namespace: str, body: dict[str, Any]) -> Any:
        if not self.bodies:
            raise ApiException(status=404)
        self.bodies.append(body)
        return SimpleNamespace()

    def create_namespaced_lease(self, namespace: str, body: dict[str, Any]) -> Any:
        self.bodies.append(body)
        return SimpleNamespace()


def test_the_switch_is_renewed_only_while_wanted() -> None:
    leases, held = FakeLeases(), [True]
    switch = nodeagent._Switch(leases, 0.5, lambda: held[0])  # type: ignore[arg-type]
    switch.start()
    time.sleep(0.55)
    held[0] = False
    time.sleep(0.25)
    count = len(leases.bodies)
    assert count >= 4, "created, then renewed every switch_s / 5"
    times = [b["spec"]["renewTime"] for b in leases.bodies]
    assert len(set(times)) == len(times), "every renewal changes renewTime"
    assert leases.bodies[0]["metadata"]["name"] == switch.name
    assert switch.name.startswith(f"{SWITCH_LEASE}-"), "one switch per suite process"
    assert leases.bodies[0]["spec"]["leaseDurationSeconds"] == 1  # whole seconds, at least 1
    time.sleep(0.3)
    assert len(leases.bodies) == count, "no renewal once nothing is held"


# --- an install is a holding of the run --------------------------------------------------------

_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.fixture
def users_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A run of its own, a user's kubeconfig, and the cluster calls recorded (none is made)."""
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.delenv(reaping.RUN_ENV, raising=False)
    monkeypatch.setattr(runs, "_current", runs._Current())
    kubeconfig = tmp_path / "users.kubeconfig"
    kubeconfig.write_text(_KUBECONFIG)
    calls: list[str] = []
    monkeypatch.setattr(ExistingCluster, "nodes_by_zone", lambda self: {"zone-a": ["n1"]})
    monkeypatch.setattr(nodeagent, "install", lambda api, progress: calls.append("install"))
    monkeypatch.setattr(nodeagent, "installed", lambda api: True)
    monkeypatch.setattr(existing, "node_lease_timings", lambda api, assumed: assumed)
    monkeypatch.setattr(existing.cluster_dns, "present", lambda api: True)
    monkeypatch.setattr(existing, "_answers", lambda api, kubeconfig: None)  # no server here
    monkeypatch.setattr(nodeagent, "remove", lambda api, progress: calls.append("remove"))
    monkeypatch.setitem(runs._REAPERS, "objects",
                        lambda holding, progress: calls.append("sweep"))
    yield {"kubeconfig": kubeconfig, "calls": calls, "run": runs.open_run("test", keeper=False)}
    if runs.current() is not None:
        runs.close(print)


def test_an_agent_install_is_held_by_the_run_and_removed_before_the_sweep(
        users_cluster: dict[str, Any]) -> None:
    backend = ExistingBackend(users_cluster["kubeconfig"], allow_destructive=True)
    cluster = backend.create(ClusterSpec(name="users"), progress=lambda _: None)
    assert isinstance(cluster, AgentCluster)
    assert [h["kind"] for h in users_cluster["run"].holdings()] == [nodeagent.HOLDING, "objects"]
    assert runs.close(print) == []
    assert users_cluster["calls"] == ["install", "remove", "sweep"], \
        "the agent reverts on command and goes before the run's labelled objects are swept"


@pytest.mark.parametrize("coredns", [True, False])
def test_a_users_cluster_takes_a_dns_outage_where_it_runs_coredns(
        coredns: bool, users_cluster: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """With the agent, a cluster running kubeadm's CoreDNS has the ClusterDns facet, its
    resolver workload on the agent's image (which every node runs); without CoreDNS the
    dns-outage is refused, saying why."""
    monkeypatch.setattr(existing.cluster_dns, "present", lambda api: coredns)
    monkeypatch.setenv(nodeagent.IMAGE_ENV, "registry.example/agent:1")
    cluster = ExistingBackend(users_cluster["kubeconfig"], allow_destructive=True).create(
        ClusterSpec(name="users"), progress=lambda _: None)
    reason = facets.unmet(cluster, [Capability.CLUSTER_DNS], what="dns-outage")
    if coredns:
        assert reason is None
        assert facets.facet(cluster, Capability.CLUSTER_DNS).resolver_image() == \
            "registry.example/agent:1"
    else:
        assert reason is not None and "kube-system/coredns" in reason


def test_without_allow_destructive_nothing_is_installed_or_held(
        users_cluster: dict[str, Any]) -> None:
    backend = ExistingBackend(users_cluster["kubeconfig"], allow_destructive=False)
    cluster = backend.create(ClusterSpec(name="users"), progress=lambda _: None)
    assert not isinstance(cluster, AgentCluster)
    assert users_cluster["run"].holdings() == []
    assert runs.close(print) == [] and users_cluster["calls"] == []


def test_the_agents_objects_carry_the_run_label(users_cluster: dict[str, Any]) -> None:
    objects = nodeagent.manifests("registry.example/agent:1")
    assert {o["metadata"]["labels"][sweep.RUN_LABEL] for o in objects} == {
        users_cluster["run"].id}


def test_delete_removes_the_agent_and_the_runs_hold_on_it(users_cluster: dict[str, Any]) -> None:
    backend = ExistingBackend(users_cluster["kubeconfig"], allow_destructive=True)
    backend.create(ClusterSpec(name="users"), progress=lambda _: None)
    assert backend.delete("users", progress=lambda _: None) is False
    assert [h["kind"] for h in users_cluster["run"].holdings()] == ["objects"]
    assert runs.close(print) == []
    assert users_cluster["calls"] == ["install", "remove", "sweep"], "removed once"


def test_an_agent_cluster_judges_kubelets_by_the_node_lease_duration_its_leases_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's 40 s would outlast a kubelet stop on a cluster renewing 4 s Leases: the
    kubelets-stopped effect would never be seen (fault-not-effective on a sound fault)."""
    def leases(*durations: int | None) -> Any:
        items = [SimpleNamespace(spec=SimpleNamespace(lease_duration_seconds=d)) for d in durations]
        return lambda _: SimpleNamespace(list_namespaced_lease=lambda ns: SimpleNamespace(
            items=items if ns == "kube-node-lease" else []))

    upstream = Timings.upstream()
    monkeypatch.setattr(existing.client, "CoordinationV1Api", leases(4, 4, 6))
    assert existing.node_lease_timings(None, upstream) == Timings(  # type: ignore[arg-type]
        node_monitor_period_s=5.0, node_monitor_grace_period_s=50.0, toleration_s=300,
        node_lease_duration_s=6, etcd_election_timeout_s=1.0)
    monkeypatch.setattr(existing.client, "CoordinationV1Api", leases(None))
    assert existing.node_lease_timings(None, upstream) == upstream  # type: ignore[arg-type]
