"""A running kind cluster zoneproof made: its node containers and fault primitives.

Rebuilt from the cluster's state directory (``KindPaths``), so any process (``zoneproof
status``, a test, a chaos run) can act on it. Faults run in the node containers: the
kubelet through systemd, static control-plane pods through their manifests and containerd
(``nodes``), whole nodes through docker (``docker``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, nft, processes, waiting
from zoneproof.cluster import _etcd, cluster_dns
from zoneproof.cluster._common import ZONE_LABEL, ApiCluster
from zoneproof.cluster.interface import (
    RESOLVER_IMAGE,
    Capability,
    ClusterStatus,
    ControlPlaneProcess,
    Progress,
)
from zoneproof.cluster.kind import docker, tools
from zoneproof.cluster.kind import nodes as nodes_
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import ownership, state

__all__ = ["NAME", "ROLE_LABEL", "KindCluster", "KindPaths"]

NAME = "kind"


ROLE_LABEL = "io.x-k8s.kind.role"
#: kubeadm's label of control-plane nodes.
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
#: Importing an image archive into every node's containerd (a few hundred MiB each).
_LOAD_TIMEOUT_S = 600.0
_EXPORT_TIMEOUT_S = 300.0
_READY_TIMEOUT_S = {"nodes": 300.0, "components": 120.0, "etcd": 180.0}
_ETCD_CERTS = ("ca.crt", "healthcheck-client.crt", "healthcheck-client.key")


class KindPaths:
    """Files of one kind cluster's state directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root / "state.json"
        self.kubeconfig = root / "kubeconfig"
        self.config = root / "kind-config.yaml"
        self.audit_policy = root / "audit-policy.yaml"
        self.audit_dir = root / "audit"
        self.etcd_certs = root / "etcd-client"
        self.create_log = root / "kind-create.log"


#: Kubelets, etcd members and control plane in node containers, the containers themselves
#: (stop, start, pause), images loaded into them; faults may disrupt it. Listed one by one:
#: a new capability is granted only by adding it here.
CAPABILITIES = frozenset({Capability.STOP_KUBELET, Capability.ETCD_MEMBERS,
                          Capability.CONTROL_PLANE, Capability.NODE_CONTAINERS,
                          Capability.LOAD_IMAGES, Capability.KUBELET_LINKS,
                          Capability.CLUSTER_DNS, Capability.DESTRUCTIVE})


class KindCluster(ApiCluster):
    """A kind cluster zoneproof made, reconstructed from its state directory."""

    backend = NAME
    capabilities = CAPABILITIES

    def __init__(self, paths: KindPaths) -> None:
        self.paths = paths
        data = state.read_json(paths.state)
        self.spec, _ = ClusterSpec.from_stored(data["spec"])  # (older states: local options)
        self.name = self.spec.name
        self.timings = self.spec.timings
        self.kind_name: str = data["kind_name"]
        self.image: str = data["image"]
        self.kubeconfig = paths.kubeconfig

    # -- containers --------------------------------------------------------------------
    def containers(self, role: str | None = None) -> dict[str, bool]:
        """Node container → running; only those of ``role`` (control-plane, worker) if given."""
        labels = [f"{docker.CLUSTER_LABEL}={self.kind_name}"]
        if role is not None:
            labels.append(f"{ROLE_LABEL}={role}")
        return docker.containers(*labels)

    def control_planes(self) -> list[str]:
        """The control-plane node containers, sorted (kind: name, name2, name3)."""
        return sorted(self.containers("control-plane"))

    def _node(self, node: str) -> str:
        if node not in self.containers():
            raise errors.FaultError(f"no node {node!r} in kind cluster {self.kind_name!r}; "
                                    f"nodes: {sorted(self.containers())}")
        return node

    @functools.cached_property
    def _gateway(self) -> str:
        return docker.gateway()

    @property
    def host_address(self) -> str:
        """The docker network's gateway: where the node containers reach this host."""
        return self._gateway

    def nodes_by_zone(self) -> dict[str, list[str]]:
        """Zone → worker nodes; control-plane nodes (an HA control plane's carry a zone
        each: ``control_plane_zones``) are left out."""
        planes = set(self.control_plane_zones())
        return {zone: kept for zone, names in super().nodes_by_zone().items()
                if zone and (kept := [n for n in names if n not in planes])}

    def control_plane_zones(self) -> dict[str, str]:
        """Control-plane node → its zone ('' for a single control plane's, which has none)."""
        return {n.metadata.name: (n.metadata.labels or {}).get(ZONE_LABEL, "")
                for n in self.core.list_node(label_selector=CONTROL_PLANE_LABEL).items}

    def audit_log(self) -> Path | None:
        """The API server's audit log (single control plane only; HA has one per member)."""
        return self.paths.audit_dir / "audit.log" if self.spec.etcd_members == 1 else None

    def save_logs(self, directory: Path) -> list[Path]:
        """``kind export logs``: every node's journal, kubelet, containerd and container logs
        (the static control-plane pods' among them)."""
        directory.mkdir(parents=True, exist_ok=True)
        processes.run([str(tools.kind_binary()), "export", "logs", str(directory), "--name",
                       self.kind_name], env=tools.kind_env(), timeout_s=_EXPORT_TIMEOUT_S)
        return sorted(p for p in directory.rglob("*") if p.is_file())

    def load_image_archive(self, archive: Path) -> None:
        """Import the images of ``archive`` (``docker save`` or OCI) into every node's
        containerd with ``kind load image-archive``: pods that name them start with no pull."""
        if not archive.is_file():
            raise errors.ConfigError(f"image archive {archive} does not exist: build it with "
                                     "`zoneproof build --images` (or pass a `docker save` archive)")
        processes.run([str(tools.kind_binary()), "load", "image-archive", str(archive),
                       "--name", self.kind_name], env=tools.kind_env(), timeout_s=_LOAD_TIMEOUT_S)

    # -- kubelets and node containers --------------------------------------------------
    def stop_kubelet(self, node: str) -> None:
        """``systemctl stop kubelet`` in the node: its lease stops, kcm marks it NotReady."""
        docker.exec_in(self._node(node), nodes_.kubelet_argv("stop"))

    def start_kubelet(self, node: str) -> None:
        """``systemctl start kubelet`` in the node."""
        docker.exec_in(self._node(node), nodes_.kubelet_argv("start"))

    def _each(self, action: Callable[[str], None], names: list[str]) -> None:
        """``action`` on every name at once (a zone fails together)."""
        with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
            for future in [pool.submit(action, name) for name in names]:
                future.result()

    def zone_down(self, zone: str) -> None:
        """Stop the kubelet of every node of ``zone`` at once."""
        self._each(self.stop_kubelet, self.zone_nodes(zone))

    def zone_up(self, zone: str) -> None:
        """Start the kubelet of every node of ``zone`` again."""
        self._each(self.start_kubelet, self.zone_nodes(zone))

    def stop_nodes(self, nodes: list[str]) -> None:
        """``docker stop --time 0``: the node is gone, kubelet, pods and all. Its addresses
        are pinned first, so that ``start_nodes`` brings it back as the same node."""
        names = [self._node(n) for n in nodes]
        held = {name: docker.addresses(name) for name in names}
        docker.container_action("stop", names)
        for name, (ipv4, ipv6) in held.items():
            if ipv4:  # empty: it was already stopped (and pinned then)
                docker.pin_addresses(name, ipv4, ipv6)

    def start_nodes(self, nodes: list[str]) -> None:
        """``docker start``, at the addresses the node had (see ``stop_nodes``)."""
        names = [self._node(n) for n in nodes]
        try:
            docker.container_action("start", names)
        except processes.CommandError as exc:
            if "address already in use" not in exc.output.lower():
                raise
            raise errors.FaultError(
                f"cannot start {names}: while stopped, a node's address on docker network "
                f"{docker.NETWORK} was taken by another container (`docker network inspect "
                f"{docker.NETWORK}` shows which); remove that container and start the nodes "
                "again") from exc

    def pause_nodes(self, nodes: list[str]) -> None:
        """``docker pause``: every process of the node is frozen."""
        docker.container_action("pause", [self._node(n) for n in nodes])

    def unpause_nodes(self, nodes: list[str]) -> None:
        """``docker unpause`` of those paused (idempotent)."""
        docker.container_action("unpause", docker.paused([self._node(n) for n in nodes]))

    def kill_pod_containers(self, node: str, namespace: str, pod: str) -> int:
        """SIGKILL the running containers of pod ``namespace/pod`` on ``node`` through the
        node's containerd (``ctr task kill -s SIGKILL``: no SIGTERM, no grace); how many."""
        filters = nodes_.container_filters(namespace, pod)
        script = ('for c in $(ctr -n k8s.io containers list -q "$1"); do '
                  'ctr -n k8s.io task kill -s SIGKILL "$c" 2>/dev/null && echo "$c"; done; true')
        killed = docker.exec_in(self._node(node), ["sh", "-c", script, "kill", filters])
        return len(killed.split())

    def running_pods(self, node: str, namespace: str) -> list[str]:
        """The pods of ``namespace`` with a running container in ``node``, as its containerd
        reports them (``nodes.running_pods_argv``)."""
        return nodes_.pod_names(docker.exec_in(self._node(node),
                                               nodes_.running_pods_argv(namespace)))

    def resolver_image(self) -> str:
        """kubeadm's kube-proxy image, which every node holds (ClusterDns)."""
        return RESOLVER_IMAGE

    # -- network cuts (zoneproof's nftables table in node containers: nft.TABLE) --
    def _apiserver_addresses(self) -> tuple[list[str], list[str]]:
        """(IPv4, IPv6) addresses of the API servers and their load balancer (HA)."""
        names = [*self.control_planes(), *self.containers("external-load-balancer")]
        found = [docker.addresses(name) for name in names]
        return [a for a, _ in found if a], [b for _, b in found if b]

    def cut_kubelet_links(self, zone: str) -> None:
        """In every node of ``zone`` at once, drop what its own processes (the kubelet
        among them) send to the API servers' port (``nodes.cut_apiserver_argv``); its pods
        and everything else keep running. A bed kept past the run gets it removed by the
        run's keeper if the run dies (``repair``)."""
        names = self.zone_nodes(zone)
        ipv4, ipv6 = self._apiserver_addresses()
        ownership.disturbed(NAME, self.name, ownership.Ownership.of_state(
            state.read_json(self.paths.state)))
        argv = nodes_.cut_apiserver_argv(ipv4, ipv6)
        self._each(lambda node: self._exec(node, argv), names)

    def restore_kubelet_links(self, zone: str) -> None:
        """Remove zoneproof's table from every node of ``zone`` (idempotent)."""
        self._each(self._uncut, self.zone_nodes(zone))

    def _uncut(self, node: str) -> None:
        self._exec(node, nft.uncut_argv())

    @staticmethod
    def _exec(node: str, argv: list[str]) -> None:
        docker.exec_in(node, argv)

    def cut_nodes(self) -> list[str]:
        """The running node containers holding a zoneproof table (a cut in force)."""
        balancers = self.containers("external-load-balancer")
        running = [n for n, up in self.containers().items() if up and n not in balancers]
        return sorted(n for n in running if docker.exec_in(n, nodes_.cut_argv()).strip())

    def repair(self, progress: Progress) -> list[str]:
        """Remove every network cut a run left in force and give CoreDNS back the replicas
        a DNS outage took (its keeper calls this when the run died); the nodes that held a
        cut. (Stopped kubelets and containers come back with ``restore_nodes``, parked
        static pods with their fault's revert.)"""
        held = self.cut_nodes()
        if held:
            progress(f"cluster {self.name!r}: removing the network cuts left in {held}")
            self._each(self._uncut, held)
        if not self.kubeconfig.is_file():  # no API to ask (a cluster never fully made)
            return held
        try:
            with kube.api_client(self.kubeconfig, retries=0, request_timeout_s=10) as api:
                if (replicas := cluster_dns.restore(api)) is not None:
                    progress(f"cluster {self.name!r}: CoreDNS given back its {replicas} "
                             "replicas (a DNS outage was left in force)")
        except (client.ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            progress(f"cluster {self.name!r}: could not check CoreDNS ({exc}); if a DNS outage "
                     f"was left, scale kube-system/coredns back (kubeadm's default: 2 replicas)")
        return held

    # -- etcd (stacked: one member per control-plane node) -----------------------------
    @functools.cached_property
    def _etcd_pool(self) -> urllib3.PoolManager:
        directory = self.paths.etcd_certs
        if not all((directory / f).is_file() for f in _ETCD_CERTS):
            directory.mkdir(parents=True, exist_ok=True)
            for name in _ETCD_CERTS:
                text = docker.exec_in(self.control_planes()[0],
                                      ["cat", f"/etc/kubernetes/pki/etcd/{name}"])
                (directory / name).write_text(text)
                (directory / name).chmod(0o600)
        return _etcd.tls_pool(directory / "ca.crt", directory / "healthcheck-client.crt",
                              directory / "healthcheck-client.key")

    def etcd_url(self, member: str) -> str:
        """Client URL of etcd member ``member`` (its node's address, port 2379)."""
        return f"https://{docker.ipv4(member)}:2379"

    def etcd_members(self) -> list[str]:
        """The control-plane node names (kubeadm names each member after its node)."""
        return self.control_planes()

    def _member(self, member: str) -> str:
        if member not in self.etcd_members():
            raise errors.FaultError(f"no etcd member {member!r} in kind cluster "
                                    f"{self.kind_name!r}; members: {self.etcd_members()}")
        return member

    def etcd_leader(self) -> str:
        """The member whose id is the leader id reported by the live members."""
        return _etcd.leader({m: self.etcd_url(m) for m in self.etcd_members()}, self.kind_name,
                            self._etcd_pool)

    def etcd_member_healthy(self, member: str) -> bool:
        """True if ``member`` answers /health with health true."""
        return _etcd.healthy(self.etcd_url(self._member(member)), self._etcd_pool)

    def kill_etcd_member(self, member: str) -> None:
        """SIGKILL the member's static pod and keep the kubelet from starting it again."""
        _ = self._etcd_pool  # fetch the client certificate while etcd still serves it
        nodes_.park_static_pod(self._member(member), "etcd")

    def restart_etcd_member(self, member: str) -> None:
        """Start the member again, and its node's API server with it; returns once the
        member serves clients and that API server runs.

        kubeadm's stacked etcd: the node's kube-apiserver has this member as its only etcd,
        and the node's kubelet talks to that API server, which hangs without its member.
        Given the member's manifest back, the kubelet would first wait out its pending API
        calls (~35 s each, two of them) before it starts etcd, while the API server's etcd
        client backs off further and its liveness probe restarts it (after ~80 s). So the
        API server is parked while the member starts (the kubelet's calls fail at once) and
        given back once the member serves: a fresh API server dials the member at once. An
        API server another fault parked stays parked.
        """
        node = self._member(member)
        held = nodes_.static_pod_parked(node, "kube-apiserver")
        if not held:
            nodes_.park_static_pod(node, "kube-apiserver")
        try:
            nodes_.unpark_static_pod(node, "etcd")
            url = self.etcd_url(member)
            waiting.wait_for(lambda: (_etcd.member_status(url, self._etcd_pool) is not None, url),
                             what=f"etcd member {member} serving clients",
                             timeout_s=_READY_TIMEOUT_S["etcd"], interval_s=0.5)
        finally:
            if not held:
                nodes_.unpark_static_pod(node, "kube-apiserver")
        if not held:
            waiting.wait_for(
                lambda: (nodes_.static_pod_running(node, "kube-apiserver"), None),
                what=f"kube-apiserver running on {node} again",
                timeout_s=_READY_TIMEOUT_S["components"], interval_s=0.5)

    def wait_etcd_healthy(self, timeout_s: float = 30.0) -> None:
        """Wait until every member is up and reports health."""
        for member in self.etcd_members():
            waiting.wait_for(
                functools.partial(_etcd.health_probe, self.etcd_url(member), self._etcd_pool),
                what=f"etcd member {member} healthy", timeout_s=timeout_s, interval_s=0.5)

    # -- control plane -----------------------------------------------------------------
    def kill_component(self, component: ControlPlaneProcess) -> None:
        """SIGKILL ``component`` on every control-plane node; it stays down until restarted."""
        self._each(lambda node: nodes_.park_static_pod(node, component.value),
                   self.control_planes())

    def restart_component(self, component: ControlPlaneProcess) -> None:
        """Start ``component`` again on every control-plane node; returns once it runs."""
        planes = self.control_planes()
        self._each(lambda node: nodes_.unpark_static_pod(node, component.value), planes)

        def probe() -> tuple[bool, list[str]]:
            down = [n for n in planes if not nodes_.static_pod_running(n, component.value)]
            if not down and component is ControlPlaneProcess.APISERVER:
                return self.apiserver_ready(), ["/readyz"]
            return not down, down

        waiting.wait_for(probe, what=f"{component.value} running on {planes}",
                         timeout_s=_READY_TIMEOUT_S["components"], interval_s=0.5)

    def component_running(self, component: ControlPlaneProcess) -> bool:
        """True if ``component``'s static pod runs on every control-plane node."""
        return all(nodes_.static_pod_running(n, component.value) for n in self.control_planes())

    def status(self) -> ClusterStatus:
        """Node containers running, and node readiness (empty if the API server is down)."""
        try:
            ready = self.nodes_ready() if self.apiserver_ready() else {}
        except (client.ApiException, urllib3.exceptions.HTTPError):
            ready = {}
        return ClusterStatus(self.name, self.backend, self.kubeconfig, self.containers(), ready)

    # -- creation steps ----------------------------------------------------------------
    def wait_ready(self) -> None:
        """Every node Ready (a timeout raises) and the default ServiceAccount made."""
        expected = len(self.containers()) - len(self.containers("external-load-balancer"))

        def probe() -> tuple[bool, dict[str, bool]]:
            now = self.nodes_ready()
            return len(now) == expected and all(now.values()), now

        waiting.wait_for(probe, what=f"all {expected} nodes of {self.kind_name} Ready",
                         timeout_s=_READY_TIMEOUT_S["nodes"], interval_s=1.0,
                         ignore=(client.ApiException, urllib3.exceptions.HTTPError))
        waiting.wait_for(
            lambda: (self.core.read_namespaced_service_account("default", "default") is not None,
                     None),
            what="ServiceAccount default/default", timeout_s=_READY_TIMEOUT_S["components"],
            ignore=(client.ApiException,))
