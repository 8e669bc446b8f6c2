"""The existing backend: a user's cluster, reached by kubeconfig. zoneproof never deletes it,
and never substitutes another cluster for it.

Without ``--allow-destructive`` nothing in the cluster is touched by a fault: every
disruptive fault is refused, saying why, and no agent is installed. With it, ``create``
prints the blast radius (every node by its ``topology.kubernetes.io/zone`` label) and
installs the node agent (``zoneproof.cluster.nodeagent``) as a holding of the current run
(labelled with the run, removed when the run ends — by its keeper if the run is killed), so
the cluster gains the Kubelets facet: kubelets stopped and started, zones taken down and up,
by the agents, bounded by the dead-man's switch; the KubeletLinks facet: a zone's nodes cut
off from the API servers by nftables in their own namespaces (where the host has nft; the
agent's report says why not where not); and, where it runs kubeadm's CoreDNS, the
ClusterDns facet (its resolver workload runs the agent's image, which the nodes hold).
``delete`` removes a leftover agent and never the cluster. It reaches no etcd member or
control-plane process.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import urllib3
import yaml
from kubernetes import client, config

from zoneproof import errors
from zoneproof._util import kube
from zoneproof.cluster import cluster_dns, nodeagent
from zoneproof.cluster._common import ApiCluster
from zoneproof.cluster.interface import BackendConfig, Capability, ClusterStatus, Progress, Traits
from zoneproof.cluster.spec import ClusterSpec, Timings
from zoneproof.runs import sweep

__all__ = ["AgentCluster", "ExistingBackend", "ExistingCluster", "apiserver_endpoints",
           "blast_radius", "node_lease_timings", "unreachable"]

NAME = "existing"
#: Overrides the address the cluster's API server reaches this host by (webhooks served here).
HOST_ADDRESS_ENV = "ZONEPROOF_HOST_ADDRESS"


class ExistingCluster(ApiCluster):
    """A cluster zoneproof did not create."""

    backend = NAME

    def __init__(self, kubeconfig: Path, *, allow_destructive: bool) -> None:
        self.kubeconfig = kubeconfig
        self.name = kubeconfig.stem
        self.capabilities = frozenset({Capability.DESTRUCTIVE} if allow_destructive else ())
        self.timings = Timings.upstream()  # its own cannot be read: assume upstream's

    def status(self) -> ClusterStatus:
        """Node readiness (there are no processes of ours); BackendError if the cluster does
        not answer."""
        try:
            nodes = self.nodes_ready()
        except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise unreachable(self.kubeconfig, self.api.configuration.host, exc) from exc
        return ClusterStatus(self.name, self.backend, self.kubeconfig, {}, nodes)

    @property
    def host_address(self) -> str:
        """Where the cluster's API server reaches this host (webhooks served here):
        ``$ZONEPROOF_HOST_ADDRESS``, else this host's address on its route to the API server
        as the cluster sees it (the ``kubernetes`` Service's endpoint, e.g. a kind node's
        address behind a port forwarded to loopback)."""
        if explicit := os.environ.get(HOST_ADDRESS_ENV):
            return explicit
        target = urlparse(self.api.configuration.host).hostname or "127.0.0.1"
        if ipaddress.ip_address(socket.gethostbyname(target)).is_loopback:
            addresses = [address for address, _ in apiserver_endpoints(self.api)]
            if not addresses:
                return "127.0.0.1"
            target = addresses[0]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as route:
            route.connect((target, 443))  # no packet: the kernel picks the source address
            return str(route.getsockname()[0])


def apiserver_endpoints(api: client.ApiClient) -> list[tuple[str, int]]:
    """The API servers' (address, port)s as the cluster lists them (the ``kubernetes``
    Service's EndpointSlices)."""
    slices = client.DiscoveryV1Api(api).list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=kubernetes").items
    return [(address, port.port) for es in slices for port in es.ports or [] if port.port
            for endpoint in es.endpoints or [] for address in endpoint.addresses]


def unreachable(kubeconfig: Path, server: str, exc: BaseException) -> errors.BackendError:
    """The error for a cluster that does not answer, naming what to check."""
    reason = str(getattr(exc, "reason", None) or exc) or type(exc).__name__
    if isinstance(exc, urllib3.exceptions.ReadTimeoutError | TimeoutError):
        reason = f"no answer within {sum(ANSWER_TIMEOUT_S):g} s ({reason})"
    return errors.BackendError(
        f"cannot reach the cluster of {kubeconfig} at {server}: {reason[:300]}; check that it is "
        "up and that the kubeconfig's server, credentials and CA are right (`kubectl "
        f"--kubeconfig {kubeconfig} get nodes` tells)")


ANSWER_TIMEOUT_S = (5.0, 10.0)
"""Connect and read bounds of the first request to a user's cluster: an API server that
is down, or a port that accepts and never answers, is named within 15 s (no retries)."""


def _answers(api: client.ApiClient, kubeconfig: Path) -> None:
    """The API server of ``kubeconfig`` answers ``/version`` within ``ANSWER_TIMEOUT_S``;
    BackendError naming its URL if it does not."""
    try:
        client.VersionApi(api).get_code(_request_timeout=ANSWER_TIMEOUT_S)
    except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
        if isinstance(exc, client.ApiException) and exc.status in (401, 403):
            return  # it answers; what the credentials may do is told where it matters
        raise unreachable(kubeconfig, api.configuration.host, exc) from None


def node_lease_timings(api: client.ApiClient, assumed: Timings) -> Timings:
    """``assumed`` with the node-lease duration the cluster's kubelets state in their
    Leases (kube-node-lease ``leaseDurationSeconds``, the longest): a stopped kubelet's
    silence is judged by it, so an assumed 40 s would outlast a fault on a cluster whose
    kubelets renew a 4 s Lease. ``assumed`` if no node Lease states one."""
    leases = client.CoordinationV1Api(api).list_namespaced_lease("kube-node-lease").items
    stated = [lease.spec.lease_duration_seconds for lease in leases
              if lease.spec is not None and lease.spec.lease_duration_seconds]
    return replace(assumed, node_lease_duration_s=max(stated)) if stated else assumed


class AgentCluster(ExistingCluster):
    """A cluster zoneproof did not create, destructive faults allowed, node agents installed."""

    def __init__(self, kubeconfig: Path) -> None:
        super().__init__(kubeconfig, allow_destructive=True)
        dns = {Capability.CLUSTER_DNS} if cluster_dns.present(self.api) else set()
        self.capabilities = self.capabilities | {Capability.STOP_KUBELET,
                                                 Capability.KUBELET_LINKS, *dns}
        self._agents: nodeagent.NodeAgents | None = None
        self.timings = node_lease_timings(self.api, self.timings)

    @property
    def agents(self) -> nodeagent.NodeAgents:
        """The node agents (Kubelets facet); one driver, and one switch, per cluster object."""
        if self._agents is None:
            self._agents = nodeagent.NodeAgents(self.api)
        return self._agents

    # --- Kubelets (through the node agents) ---------------------------------------------------
    def stop_kubelet(self, node: str) -> None:
        """Stop the node's kubelet through its agent."""
        self.agents.stop_kubelets([node])

    def start_kubelet(self, node: str) -> None:
        """Start it again (a no-op where this cluster object stopped nothing)."""
        self.agents.revert([node])

    def zone_down(self, zone: str) -> None:
        """Stop the kubelet of every node of ``zone`` (by its zone label) at once."""
        self.agents.stop_kubelets(self.zone_nodes(zone))

    def zone_up(self, zone: str) -> None:
        """Start the kubelets of ``zone`` again."""
        self.agents.revert(self.zone_nodes(zone))

    # --- KubeletLinks (through the node agents) --------------------------------------------
    def _suite_endpoints(self) -> list[tuple[str, int]]:
        """The API servers' endpoints, and the server of this run's kubeconfig where it is no
        loopback address (a load balancer the nodes may use too); the agents add the server
        each node's kubelet is configured with."""
        url = urlparse(self.api.configuration.host)
        found = apiserver_endpoints(self.api)
        if url.hostname:
            port = url.port or 443
            found += [(str(info[4][0]), port) for info in socket.getaddrinfo(
                url.hostname, port, proto=socket.IPPROTO_TCP)
                if not ipaddress.ip_address(info[4][0]).is_loopback]
        return found

    def cut_kubelet_links(self, zone: str) -> None:
        """On every node of ``zone`` at once, its own processes (the kubelet among them) and
        the API servers exchange nothing (nftables in the node's namespaces, by its agent);
        its pods, the agent's among them, and everything else keep running."""
        self.agents.cut_apiserver(self.zone_nodes(zone), self._suite_endpoints())

    def restore_kubelet_links(self, zone: str) -> None:
        """Undo ``cut_kubelet_links`` (the agents delete their table; idempotent)."""
        self.agents.revert(self.zone_nodes(zone))

    # --- ClusterDns -----------------------------------------------------------------------
    def resolver_image(self) -> str:
        """The node agent's image: a Debian root with getent that every node runs already."""
        return nodeagent.image()


def blast_radius(zones: dict[str, list[str]]) -> str:
    """What node faults can hit, by zone label (nodes without one listed as such)."""
    parts = [f"{zone or '(no zone label)'}: {', '.join(nodes)}" for zone, nodes in zones.items()]
    total = sum(len(nodes) for nodes in zones.values())
    return (f"blast radius: node faults may stop the kubelet of, or cut off from the API "
            f"servers, any of these {total} nodes (a privileged node agent runs on each for "
            f"the run) — {'; '.join(parts)}")


class ExistingBackend:
    """Connects to the cluster of a kubeconfig; create checks it answers (and installs the node
    agent if destructive faults are allowed), delete removes only a leftover agent."""

    name = NAME
    traits = Traits(summary="a cluster you already have, reached by --kubeconfig; never deleted",
                    makes_clusters=False, needs_kubeconfig=True)

    def __init__(self, kubeconfig: Path | None, *, allow_destructive: bool = False) -> None:
        self.kubeconfig = kubeconfig
        self.allow_destructive = allow_destructive

    @classmethod
    def from_config(cls, config: BackendConfig) -> ExistingBackend:
        """The cluster of ``config.kubeconfig``; destructive faults only if allowed."""
        return cls(config.kubeconfig, allow_destructive=config.allow_destructive)

    def prepare(self, progress: Progress) -> None:
        """Nothing to fetch: the cluster exists."""

    def _cluster(self) -> ExistingCluster:
        if self.kubeconfig is None:
            raise errors.ConfigError("the existing backend needs a kubeconfig: pass "
                                     "--kubeconfig PATH (pytest: --zp-kubeconfig PATH)")
        if not self.kubeconfig.is_file():
            raise errors.ConfigError(f"kubeconfig {self.kubeconfig} does not exist: pass the "
                                     "path of a readable kubeconfig file with --kubeconfig "
                                     "(pytest: --zp-kubeconfig)")
        try:
            api = kube.api_client(self.kubeconfig, retries=0)
        except (config.ConfigException, yaml.YAMLError, OSError, ValueError, TypeError,
                KeyError, AttributeError) as exc:
            raise errors.ConfigError(
                f"{self.kubeconfig} is not a usable kubeconfig ({type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:200]}): pass a kubeconfig kubectl accepts with --kubeconfig "
                "(pytest: --zp-kubeconfig)") from None
        with api:
            _answers(api, self.kubeconfig)
        return ExistingCluster(self.kubeconfig, allow_destructive=self.allow_destructive)

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> ExistingCluster:
        """Connect and check the API server answers; the spec is not applied."""
        cluster = self._cluster()
        try:
            zones = cluster.nodes_by_zone()
        except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise unreachable(cluster.kubeconfig, cluster.api.configuration.host, exc) from exc
        progress(f"using existing cluster of {self.kubeconfig}: zones {sorted(zones)}")
        if not self.allow_destructive:
            progress("destructive faults refused, nothing in the cluster is touched and no node "
                     "agent is installed: the cluster is not zoneproof's. --allow-destructive "
                     "(pytest: --zp-allow-destructive) allows node faults on a cluster you own")
            return cluster
        progress(blast_radius(zones))
        # held before it is applied (a run killed half-way removes it too), and after the
        # run's labelled objects: holdings are undone newest first, so the agent reverts
        # what it holds on command and goes before the sweep
        sweep.track(cluster.kubeconfig)
        nodeagent.hold(cluster.kubeconfig)
        nodeagent.install(cluster.api, progress=progress)
        return AgentCluster(cluster.kubeconfig)

    def get(self, name: str) -> ExistingCluster | None:
        """The cluster of the kubeconfig (with the Kubelets facet if the agent is installed)."""
        cluster = self._cluster()
        if not self.allow_destructive:
            return cluster
        try:
            agent = nodeagent.installed(cluster.api)
        except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise unreachable(cluster.kubeconfig, cluster.api.configuration.host, exc) from exc
        return AgentCluster(cluster.kubeconfig) if agent else cluster

    def delete(self, name: str, *, progress: Progress) -> bool:
        """Remove a node agent zoneproof left (a run's end removes its own); never deletes a
        user's cluster."""
        cluster = self._cluster()
        if nodeagent.installed(cluster.api):
            nodeagent.remove(cluster.api, progress=progress)
        nodeagent.unhold(cluster.kubeconfig)
        progress("existing backend: the cluster is not zoneproof's; it is left running")
        return False

    def names(self) -> list[str]:
        """The kubeconfig's stem."""
        return [self._cluster().name] if self.kubeconfig else []
