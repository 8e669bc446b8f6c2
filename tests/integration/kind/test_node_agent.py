"""Node faults on a cluster zoneproof did not make, through the node agent (issue 19).

The cluster is made by plain ``kind create cluster --config kind-configs/multi-zone*.yaml``
(not by zoneproof; the cgroup-v1 twin on a cgroup-v1 host) with the node-agent image loaded,
and driven as the existing backend. ``ZONEPROOF_FOREIGN_KUBECONFIG`` names such a cluster
already up (the agent image loaded) to reuse it instead: it is then left running.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from zoneproof import cluster, errors
from zoneproof._util import kube, waiting
from zoneproof.bench.nodeagent import sigkill_during_zone_outage
from zoneproof.binaries.images import build_component_images
from zoneproof.cluster import facets, nodeagent
from zoneproof.cluster.existing import AgentCluster
from zoneproof.cluster.interface import Capability
from zoneproof.cluster.kind import docker
from zoneproof.cluster.kind.backend import kind_create
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.faults import Injector, StopKubelets, ZoneOutage
from zoneproof.faults.dns import DnsOutage
from zoneproof.faults.zones import CutKubelets
from zoneproof.measure import Timeline
from zoneproof.nodeagent.protocol import NAMESPACE, Reason, State
from zoneproof.traffic import resolver, workloads

REPO = Path(__file__).resolve().parents[3]
_KUBECONFIG_ENV = "ZONEPROOF_FOREIGN_KUBECONFIG"


@pytest.fixture(scope="module")
def foreign(kind_ready: str, kind_binary: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Path]:
    """The kubeconfig of a plain kind cluster with the node-agent image in its nodes."""
    if given := os.environ.get(_KUBECONFIG_ENV):
        yield Path(given)
        return
    archive = build_component_images(progress=lambda _: None).archive
    name = f"zp-foreign-{uuid.uuid4().hex[:6]}"
    config = REPO / "kind-configs" / ("multi-zone-cgroup-v1.yaml" if docker.cgroup_v1()
                                      else "multi-zone.yaml")
    kubeconfig = tmp_path_factory.mktemp("foreign") / "kubeconfig"
    kind = str(kind_binary)
    try:
        kind_create([kind, "create", "cluster", "--name", name, "--config", str(config),
                     "--image", kind_ready, "--kubeconfig", str(kubeconfig), "--wait", "180s"],
                    log_file=kubeconfig.with_name("kind-create.log"), progress=print,
                    delete=[kind, "delete", "cluster", "--name", name], env={})
        subprocess.run([kind, "load", "image-archive", str(archive), "--name", name], check=True,
                       capture_output=True, timeout=600)
        yield kubeconfig
    finally:
        subprocess.run([kind, "delete", "cluster", "--name", name], check=False, timeout=300)


def _progress(lines: list[str]) -> cluster.interface.Progress:
    return lines.append


def _agent_namespace_exists(kubeconfig: Path) -> bool:
    with kube.api_client(kubeconfig) as api:
        try:
            client.CoreV1Api(api).read_namespace(NAMESPACE)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
    return True


def test_without_allow_destructive_nothing_is_touched(foreign: Path) -> None:
    lines: list[str] = []
    refused = cluster.get_backend("existing", kubeconfig=foreign).create(
        ClusterSpec(), progress=_progress(lines))
    assert "refused" in lines[-1] and "--allow-destructive" in lines[-1]
    assert not _agent_namespace_exists(foreign), "no agent without --allow-destructive"
    with pytest.raises(errors.FaultError, match="allow-destructive"):
        Injector(refused, Timeline()).check(StopKubelets(("any",)))
    assert all(refused.status().nodes_ready.values())


@pytest.fixture(scope="module")
def agents(foreign: Path) -> Iterator[AgentCluster]:
    """The foreign cluster with the agent installed for the module (removed after it)."""
    lines: list[str] = []
    backend = cluster.get_backend("existing", kubeconfig=foreign, allow_destructive=True)
    made = backend.create(ClusterSpec(), progress=_progress(lines))
    assert isinstance(made, AgentCluster)
    radius = next(i for i, line in enumerate(lines) if line.startswith("blast radius"))
    installed = next(i for i, line in enumerate(lines) if line.startswith("node agent running"))
    assert radius < installed, "the blast radius is printed before anything is installed"
    for zone, names in made.nodes_by_zone().items():
        assert all(name in lines[radius] for name in names), zone
    try:
        yield made
    finally:
        backend.delete("", progress=lambda _: None)


def test_a_kubelet_and_a_zone_go_down_and_up_through_the_agents(agents: AgentCluster) -> None:
    zones = agents.nodes_by_zone()
    node = zones["zone-a"][0]
    injector = Injector(agents, Timeline())
    with injector.injected(StopKubelets((node,)), max_duration_s=120):
        agents.wait_nodes([node], ready=False, timeout_s=90)
        assert agents.agents.reports()[node].state is State.ACTIVE
    agents.wait_nodes([node], ready=True, timeout_s=90)
    with injector.injected(ZoneOutage("zone-b"), max_duration_s=120):
        agents.wait_nodes(zones["zone-b"], ready=False, timeout_s=90)
        assert all(agents.nodes_ready()[n] for n in zones["zone-a"] + zones["zone-c"])
    agents.wait_nodes(zones["zone-b"], ready=True, timeout_s=90)
    assert [(r.kind, r.targets) for r in injector.records] == [
        ("stop-kubelets", (node,)), ("zone-outage", tuple(zones["zone-b"]))]
    assert all(r.reverted_at is not None for r in injector.records)
    reports = agents.agents.reports()
    assert {reports[n].reason for n in [node, *zones["zone-b"]]} == {Reason.COMMANDED}


def test_a_dns_outage_on_a_users_cluster_is_seen_by_resolvers_on_the_agents_image(
        agents: AgentCluster) -> None:
    """kind's CoreDNS is kubeadm's: the user's cluster has cluster-dns, its resolver pods run
    the node agent's image (no other image is on the nodes), lose every lookup while CoreDNS
    is down and resolve again once it is given back."""
    image = facets.facet(agents, Capability.CLUSTER_DNS).resolver_image()
    assert image == nodeagent.image()
    namespace = f"zp-dns-{uuid.uuid4().hex[:6]}"
    with kube.api_client(agents.kubeconfig) as api:
        core = client.CoreV1Api(api)
        workloads.create_namespace(api, namespace)
        try:
            resolver.apply(api, namespace, 3, image)

            def resolving(ready: bool) -> tuple[bool, dict[str, bool]]:
                pods = resolver.ready_pods(core, namespace)
                return len(pods) == 3 and all(r is ready for r in pods.values()), pods

            waiting.wait_for(lambda: resolving(True), what="3 resolvers resolving",
                             timeout_s=90, interval_s=0.5)
            injector = Injector(agents, Timeline())
            with injector.injected(DnsOutage(), max_duration_s=120):
                waiting.wait_for(lambda: resolving(False), what="every resolver's lookups lost",
                                 timeout_s=60, interval_s=0.5)
            waiting.wait_for(lambda: resolving(True), what="names resolved again",
                             timeout_s=60, interval_s=0.5)
        finally:
            core.delete_namespace(namespace)


def test_a_zones_kubelets_are_cut_off_from_the_api_servers_through_the_agents(
        agents: AgentCluster) -> None:
    """kubelet-apiserver-cut on a user's cluster: the agents drop what their hosts' own
    processes exchange with the API servers (nftables in the host's namespaces), so the
    zone's nodes turn NotReady while the agents, on the pod network, keep reporting; the
    revert deletes the table and the nodes come back."""
    zones = agents.nodes_by_zone()
    injector = Injector(agents, Timeline())
    with injector.injected(CutKubelets("zone-a"), max_duration_s=120):
        agents.wait_nodes(zones["zone-a"], ready=False, timeout_s=90)
        reports = agents.agents.reports()
        assert {reports[n].state for n in zones["zone-a"]} == {State.ACTIVE}
        assert all(agents.nodes_ready()[n] for n in zones["zone-b"] + zones["zone-c"])
    agents.wait_nodes(zones["zone-a"], ready=True, timeout_s=90)
    reports = agents.agents.reports()
    assert {(reports[n].action, reports[n].reason) for n in zones["zone-a"]} == {
        ("cut-apiserver", Reason.COMMANDED)}


def test_the_agent_reverts_by_itself_at_the_faults_bound(agents: AgentCluster) -> None:
    """A fault handed to the agent with a short bound ends there, without the suite."""
    node = agents.nodes_by_zone()["zone-c"][0]
    token = cluster.interface.fault_max_duration_s.set(20.0)  # > NotReady detection (~9 s)
    try:
        agents.stop_kubelet(node)
        agents.wait_nodes([node], ready=False, timeout_s=90)
        agents.wait_nodes([node], ready=True, timeout_s=90)
        assert agents.agents.reports()[node].reason is Reason.DEADLINE
    finally:
        cluster.interface.fault_max_duration_s.reset(token)
        agents.start_kubelet(node)  # the command still stands: cleared, nothing to revert


def test_sigkill_of_the_suite_with_a_zone_down_is_reverted_by_the_switch(agents: AgentCluster) -> None:
    revert_s, ready_s, reasons = sigkill_during_zone_outage(agents, "zone-c")
    print(f"SIGKILL → agents reverted {revert_s:.1f}s, → zone Ready {ready_s:.1f}s")
    assert set(reasons.values()) == {Reason.SWITCH_EXPIRED}
    assert revert_s <= nodeagent.SWITCH_S + 15, "the switch's time plus a few ticks"
    assert ready_s <= nodeagent.SWITCH_S + 90


def test_the_agent_is_removed_after_the_run_and_the_cluster_left(foreign: Path) -> None:
    backend = cluster.get_backend("existing", kubeconfig=foreign, allow_destructive=True)
    made = backend.create(ClusterSpec(), progress=lambda _: None)
    assert Capability.STOP_KUBELET in made.capabilities
    assert backend.delete("", progress=lambda _: None) is False
    assert not _agent_namespace_exists(foreign)
    after = backend.get("")
    assert after is not None and Capability.STOP_KUBELET not in after.capabilities
    with pytest.raises(errors.FaultError):
        facets.facet(after, Capability.STOP_KUBELET)
    assert after.apiserver_ready()
