"""The contract every backend implements: a Backend makes Clusters; a Cluster offers facets.

A Cluster's core is what every backend can do (identity, kubeconfig, API reads, readiness).
What only some backends can do comes in facets, one small Protocol per Capability:
``Kubelets``, ``NodeMachines``, ``EtcdMembers``, ``ControlPlane``. A cluster declares the
capabilities it has and implements their facets; ``zoneproof.cluster.facets.facet`` hands
a facet out, or raises FaultError naming the backends that have it.

A Backend declares what it is in ``Traits`` (does it make clusters or adopt one, its
default etcd members, its options...): callers decide by those, never by a backend's name.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from zoneproof._util.progress import Progress
from zoneproof.binaries import PINS
from zoneproof.cluster.spec import ClusterSpec, Timings

__all__ = [
    "RESOLVER_IMAGE",
    "WORKLOAD_IMAGE",
    "Backend",
    "BackendConfig",
    "BackendOption",
    "BackendType",
    "Capability",
    "Cluster",
    "ClusterDns",
    "ClusterStatus",
    "ControlPlaneProcess",
    "ControlPlane",
    "EtcdMembers",
    "Images",
    "KubeletLinks",
    "Kubelets",
    "NodeMachines",
    "Progress",
    "Repairable",
    "SavesLogs",
    "Traits",
    "ZoneCut",
    "Zones",
    "fault_max_duration_s",
]

#: The image of test workloads: runs on every backend without a pull (kwok fakes it; kind
#: nodes hold it, as kubeadm's pause image). Tagged, so the pull policy is IfNotPresent.
WORKLOAD_IMAGE = f"registry.k8s.io/pause:{PINS.pause}"
#: The image of a workload that resolves names (``getent``) on kind: its nodes hold it, as
#: kubeadm's kube-proxy image, a small Debian root file system (zoneproof's node image).
RESOLVER_IMAGE = f"registry.k8s.io/kube-proxy:{PINS.kubernetes}"

#: The bound (max_duration_s) of the fault being injected, set by the injector around
#: ``Fault.inject``: facets that hand a fault to something outside this process (the node
#: agent) give it this bound, so the fault ends even if this process dies.
fault_max_duration_s: ContextVar[float | None] = ContextVar("fault_max_duration_s", default=None)


class Capability(enum.Enum):
    """What a cluster can take: a facet it implements, or (DESTRUCTIVE) a permission."""

    #: ``Kubelets``: stop and start a node's kubelet, or every kubelet of a zone.
    STOP_KUBELET = "stop-kubelet"
    #: ``EtcdMembers``: see, kill and restart etcd members.
    ETCD_MEMBERS = "etcd-members"
    #: ``ControlPlane``: kill and restart kube-apiserver, kcm, the scheduler.
    CONTROL_PLANE = "control-plane"
    #: ``NodeMachines``: stop, start, pause a whole node (its machine): kubelet, pods and all.
    NODE_CONTAINERS = "node-containers"
    #: ``Images``: load an image archive into every node; its pods run those images, no pull.
    LOAD_IMAGES = "load-images"
    #: ``Zones``: each zone a failure domain of its own: its control-plane replicas and etcd
    #: member die with it, and the links between zones can be cut or slowed.
    ZONES = "zones"
    #: ``KubeletLinks``: a zone's kubelets cut off from the API server (one way: what they
    #: send is dropped) while they, their pods and the control plane keep running.
    KUBELET_LINKS = "kubelet-links"
    #: ``ClusterDns``: its pods resolve names through kubeadm's CoreDNS, which faults may take
    #: down, and its nodes run an image for a workload that resolves names.
    CLUSTER_DNS = "cluster-dns"
    #: Faults may disrupt this cluster at all (false for a user's cluster unless allowed).
    DESTRUCTIVE = "destructive"


class ControlPlaneProcess(enum.StrEnum):
    """Control-plane processes that can be killed and restarted."""

    APISERVER = "kube-apiserver"
    CONTROLLER_MANAGER = "kube-controller-manager"
    SCHEDULER = "kube-scheduler"


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    """What ``zoneproof status`` shows."""

    name: str
    backend: str
    kubeconfig: Path
    processes: dict[str, bool]
    nodes_ready: dict[str, bool]
    #: Every creation step finished (a bed whose ``up`` was interrupted is not complete).
    complete: bool = True
    #: What the backend says of its state (partial, leaked, and why), for people.
    detail: str = ""

    @property
    def healthy(self) -> bool:
        """Complete, every process alive, nodes seen and every one Ready."""
        return (self.complete and all(self.processes.values()) and bool(self.nodes_ready)
                and all(self.nodes_ready.values()))


class Cluster(Protocol):
    """A running cluster: what every backend offers. Facets (below) add the rest."""

    name: str
    backend: str
    kubeconfig: Path
    capabilities: frozenset[Capability]
    timings: Timings
    """What the cluster states of its node-lifecycle and etcd timings (its spec's; a cluster
    zoneproof did not make: ``Timings.upstream()``)."""

    @property
    def host_address(self) -> str:
        """This host's address as the cluster's API server reaches it (for webhooks)."""

    def nodes_by_zone(self) -> dict[str, list[str]]:
        """Zone → names of the Nodes labelled with it, read from the API server."""

    def client_kubeconfig(self, user: str, groups: tuple[str, ...], path: Path) -> Path:
        """Write a kubeconfig for a distinct client identity (audit logs tell who acted)."""

    def audit_log(self) -> Path | None:
        """The API server's audit log of pod deletions (JSON lines), if readable."""

    def wait_nodes(self, names: list[str], *, ready: bool, timeout_s: float) -> None:
        """Wait until every node in ``names`` is Ready (or, with ready=False, not Ready)."""

    def apiserver_ready(self) -> bool:
        """True if the API server answers /readyz with 200."""

    def status(self) -> ClusterStatus:
        """Liveness of every process and readiness of every node."""


@runtime_checkable
class Kubelets(Protocol):
    """Facet of Capability.STOP_KUBELET: nodes lose their kubelet (heartbeat), and get it back."""

    def stop_kubelet(self, node: str) -> None:
        """Stop the node's kubelet (heartbeat); it turns NotReady through kcm."""

    def start_kubelet(self, node: str) -> None:
        """Start the node's kubelet again (a no-op where it runs)."""

    def zone_down(self, zone: str) -> None:
        """Stop the kubelet of every node of ``zone`` at once."""

    def zone_up(self, zone: str) -> None:
        """Start the kubelet of every node of ``zone``."""


@runtime_checkable
class NodeMachines(Protocol):
    """Facet of Capability.NODE_CONTAINERS: whole nodes (their machines) stopped or frozen."""

    def stop_nodes(self, nodes: list[str]) -> None:
        """Stop the nodes' machines at once (no grace): a node lost, pods and all."""

    def start_nodes(self, nodes: list[str]) -> None:
        """Start stopped nodes' machines again (their kubelets come back on their own)."""

    def pause_nodes(self, nodes: list[str]) -> None:
        """Freeze the nodes' machines (every process stops being scheduled)."""

    def unpause_nodes(self, nodes: list[str]) -> None:
        """Thaw paused nodes."""

    def kill_pod_containers(self, node: str, namespace: str, pod: str) -> int:
        """SIGKILL the running containers of a pod on ``node`` (no grace); how many."""

    def running_pods(self, node: str, namespace: str) -> list[str]:
        """Names of the pods of ``namespace`` with a container running on ``node``, as the
        node's container runtime has them (not the API: a node cut off runs what the API
        no longer shows)."""


@runtime_checkable
class Images(Protocol):
    """Facet of Capability.LOAD_IMAGES: images reach the nodes without a registry."""

    def load_image_archive(self, archive: Path) -> None:
        """Import every image of ``archive`` (``docker save``/OCI) into every node."""


@runtime_checkable
class EtcdMembers(Protocol):
    """Facet of Capability.ETCD_MEMBERS: the etcd members behind the API server."""

    def etcd_members(self) -> list[str]:
        """Names of all etcd members."""

    def etcd_leader(self) -> str:
        """Name of the current etcd leader (raises if there is none)."""

    def etcd_member_healthy(self, member: str) -> bool:
        """True if ``member`` answers and reports health (raft has a leader)."""

    def kill_etcd_member(self, member: str) -> None:
        """SIGKILL an etcd member."""

    def restart_etcd_member(self, member: str) -> None:
        """Start a killed etcd member again on its data dir; returns once it serves clients.

        It turns healthy only once raft has a quorum: see ``wait_etcd_healthy``.
        """

    def wait_etcd_healthy(self, timeout_s: float = 30.0) -> None:
        """Wait until every etcd member is up and reports health."""


@runtime_checkable
class ControlPlane(Protocol):
    """Facet of Capability.CONTROL_PLANE: control-plane processes killed and restarted."""

    def kill_component(self, component: ControlPlaneProcess) -> None:
        """SIGKILL a control-plane process."""

    def restart_component(self, component: ControlPlaneProcess) -> None:
        """Start a killed control-plane process again; returns once it is healthy."""

    def component_running(self, component: ControlPlaneProcess) -> bool:
        """True if the control-plane process runs (on every control-plane node)."""


@runtime_checkable
class SavesLogs(Protocol):
    """A bed whose control plane's logs zoneproof can copy before it goes (reports keep them)."""

    def save_logs(self, directory: Path) -> list[Path]:
        """Copy the logs of the bed's control plane (and nodes, where it has them) into
        ``directory``; the files written."""


class ZoneCut(enum.StrEnum):
    """Links of a zone that ``Zones.cut_zone`` cuts."""

    #: The zone and the others cannot reach each other, both ways; everything keeps running.
    PARTITION = "partition"
    #: The zone's kubelets cannot reach any API server (one way); everything else works.
    KUBELETS = "kubelets"


@runtime_checkable
class ClusterDns(Protocol):
    """Facet of Capability.CLUSTER_DNS: what a workload that resolves names runs."""

    def resolver_image(self) -> str:
        """An image with ``getent`` that the nodes hold or can pull (no registry here)."""


@runtime_checkable
class KubeletLinks(Protocol):
    """Facet of Capability.KUBELET_LINKS: a zone's kubelets lose their way to the API server."""

    def cut_kubelet_links(self, zone: str) -> None:
        """Drop what ``zone``'s kubelets send to the API server (packets dropped in the
        network); the kubelets, their pods and everything else keep running."""

    def restore_kubelet_links(self, zone: str) -> None:
        """Undo ``cut_kubelet_links`` (idempotent)."""


@runtime_checkable
class Zones(Protocol):
    """Facet of Capability.ZONES: a zone's control plane and links, as a failure domain."""

    def zone_control_plane(self, zone: str) -> dict[str, str]:
        """Role → process of the control plane in ``zone``: ``etcd`` (its member),
        ``kube-apiserver``, ``kube-controller-manager``, ``kube-scheduler``."""

    def zone_processes_alive(self) -> dict[str, bool]:
        """Every zone's control-plane process (not etcd: see EtcdMembers) → alive."""

    def kill_zone_processes(self, zone: str) -> list[str]:
        """SIGKILL the control-plane processes of ``zone`` but etcd (and what carries its
        links); their names."""

    def restart_zone_processes(self, zone: str) -> list[str]:
        """Start what ``kill_zone_processes`` killed (a no-op for what runs); their names."""

    def cut_zone(self, zone: str, cut: ZoneCut) -> None:
        """Cut ``zone``'s links of kind ``cut`` (packets dropped in the network)."""

    def restore_zone(self, zone: str, cut: ZoneCut) -> None:
        """Undo ``cut_zone`` (idempotent)."""

    def shape_links(self, zone: str, latency_ms: int, jitter_ms: int, bandwidth_kbps: int,
                    timeout_ms: int) -> list[str]:
        """Add latency (one way, both directions), a bandwidth cap and/or a timeout to every
        link between ``zone`` and the other zones ('' : between all zones); the links."""

    def unshape_links(self) -> None:
        """Remove every latency, bandwidth cap and timeout (idempotent)."""

    def link_round_trips(self, source: str) -> dict[str, tuple[float, bool]]:
        """(seconds, answered) of one request from ``source`` to each other zone over the
        links its processes use (unanswered: the seconds until it failed)."""

    def place_leaders(self, zone: str) -> dict[str, str]:
        """Make ``zone``'s replicas the leaders: etcd's (leadership transferred to its
        member) and kcm's and the scheduler's (the other zones' replicas stopped until it
        holds their Lease, then started again); lease or role → holder."""

    def zone_kubeconfig(self, zone: str) -> Path:
        """A kubeconfig (admin) for ``zone``'s API server alone, usable from this host."""

    def etcd_write(self, member: str, timeout_s: float) -> bool:
        """True if a linearizable write sent to ``member`` alone is acknowledged within
        ``timeout_s``."""


@dataclass(frozen=True, slots=True)
class BackendOption:
    """An option only some backends take (``zoneproof up --<flag> VALUE``); the backend
    parses and validates the text."""

    flag: str
    help: str
    choices: tuple[str, ...] = ()
    metavar: str = "VALUE"


@dataclass(frozen=True, slots=True)
class Traits:
    """What a backend declares about itself: callers decide by these, never by its name."""

    #: One line for ``--help``.
    summary: str
    #: True: ``create`` makes a cluster; False: it adopts one that exists (never deletes it).
    makes_clusters: bool
    #: etcd members of a cluster nobody asked a number of.
    default_etcd_members: int = 3
    #: It reaches its cluster through a kubeconfig the user names (--kubeconfig).
    needs_kubeconfig: bool = False
    #: What its clusters can take. (``BackendConfig.allow_destructive`` adds DESTRUCTIVE to
    #: a cluster the user owns, of a backend that makes none.)
    capabilities: frozenset[Capability] = frozenset()
    #: Options only this backend takes (validated by it).
    options: tuple[BackendOption, ...] = ()
    #: Marker of the tests that make clusters of this backend themselves (run only when
    #: qualifying it), or None.
    tests_marker: str | None = None
    #: Its beds hold hundreds of nodes on one machine (kwok): the scale profile runs there.
    holds_nodes_at_scale: bool = False
    #: The least rate (ops/s) of register traffic before a fault that makes its history
    #: judgeable on this backend's beds (slower: void). What its beds carry on one machine.
    history_min_rate_ops_s: float = 100.0
    #: Options (``BackendOption.flag`` → value) under which its beds' zones are failure
    #: domains (Capability.ZONES); None: it makes no such beds.
    zoned_options: Mapping[str, str] | None = None
    #: The part of ``capabilities`` only its beds under ``zoned_options`` have.
    zoned_capabilities: frozenset[Capability] = frozenset()

    @property
    def plain_capabilities(self) -> frozenset[Capability]:
        """What its beds have without ``zoned_options``."""
        return self.capabilities - self.zoned_capabilities


@dataclass(frozen=True, slots=True)
class BackendConfig:
    """What a run tells any backend; each takes what it needs."""

    kubeconfig: Path | None = None
    #: Allow disruptive faults on a cluster zoneproof did not make.
    allow_destructive: bool = False
    #: ``BackendOption.flag`` → value text, only options the backend declares.
    options: Mapping[str, str] = field(default_factory=dict)


class Backend(Protocol):
    """Makes, finds and deletes clusters of one kind."""

    name: str
    traits: Traits

    def prepare(self, progress: Progress) -> None:
        """Fetch or build what creating its clusters needs, before parallel users do."""

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> Cluster:
        """Bring up ``spec``; on failure tear down what started unless ``keep_on_failure``.

        A no-op if the same cluster already runs; ProvisionError if it runs with another
        spec or other options (the fix: ``zoneproof down`` first).
        """

    def get(self, name: str) -> Cluster | None:
        """The running cluster called ``name``, or None."""

    def delete(self, name: str, *, progress: Progress) -> bool:
        """Remove cluster ``name`` entirely; False if there was none."""

    def names(self) -> list[str]:
        """Names of the clusters this backend made that still exist."""


class BackendType(Protocol):
    """What an entry point of group ``zoneproof.backends`` loads (a Backend class)."""

    name: str
    traits: Traits

    def from_config(self, config: BackendConfig) -> Backend:
        """A backend for ``config``; ConfigError names a bad option and the fix."""


@runtime_checkable
class Repairable(Protocol):
    """A cluster that can restart what stopped (its processes), back to its spec."""

    def repair(self, progress: Progress) -> list[str]:
        """Start what is not running and wait until healthy; what was started."""
