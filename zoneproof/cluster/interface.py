"""The contract every backend implements: a Backend makes Clusters; a Cluster offers faults.

Faults are primitives (stop a node's kubelet, kill an etcd member, ...); each backend says
which it can do through ``capabilities``, and an unsupported one raises FaultError naming a
backend that can.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from zoneproof.binaries import PINS
from zoneproof.cluster.spec import ClusterSpec

__all__ = [
    "WORKLOAD_IMAGE",
    "Backend",
    "Capability",
    "Cluster",
    "ClusterStatus",
    "Component",
    "Progress",
]

Progress = Callable[[str], None]

#: The image of test workloads: runs on every backend without a pull (kwok fakes it; kind
#: nodes hold it, as kubeadm's pause image). Tagged, so the pull policy is IfNotPresent.
WORKLOAD_IMAGE = f"registry.k8s.io/pause:{PINS.pause}"


class Capability(enum.Enum):
    """Fault families a backend can inject."""

    STOP_KUBELET = "stop-kubelet"
    ETCD_MEMBERS = "etcd-members"
    CONTROL_PLANE = "control-plane"
    #: Stop, start, pause a whole node (its container): kubelet, pods and all.
    NODE_CONTAINERS = "node-containers"
    #: Faults may disrupt this cluster at all (false for a user's cluster unless allowed).
    DESTRUCTIVE = "destructive"


class Component(enum.StrEnum):
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

    @property
    def healthy(self) -> bool:
        """Every process alive and every node Ready."""
        return all(self.processes.values()) and all(self.nodes_ready.values())


class Cluster(Protocol):
    """A running cluster and its fault primitives."""

    name: str
    backend: str
    kubeconfig: Path
    capabilities: frozenset[Capability]

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

    def stop_kubelet(self, node: str) -> None:
        """Stop the node's kubelet (heartbeat); it turns NotReady through kcm."""

    def start_kubelet(self, node: str) -> None:
        """Start the node's kubelet again."""

    def zone_down(self, zone: str) -> None:
        """Stop the kubelet of every node of ``zone``."""

    def zone_up(self, zone: str) -> None:
        """Start the kubelet of every node of ``zone``."""

    def stop_nodes(self, nodes: list[str]) -> None:
        """Stop the nodes' machines at once (no grace): a node lost, pods and all."""

    def start_nodes(self, nodes: list[str]) -> None:
        """Start stopped nodes' machines again (their kubelets come back on their own)."""

    def pause_nodes(self, nodes: list[str]) -> None:
        """Freeze the nodes' machines (every process stops being scheduled)."""

    def unpause_nodes(self, nodes: list[str]) -> None:
        """Thaw paused nodes."""

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

    def kill_component(self, component: Component) -> None:
        """SIGKILL a control-plane process."""

    def restart_component(self, component: Component) -> None:
        """Start a killed control-plane process again; returns once it is healthy."""

    def status(self) -> ClusterStatus:
        """Liveness of every process and readiness of every node."""


class Backend(Protocol):
    """Makes, finds and deletes clusters of one kind."""

    name: str

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> Cluster:
        """Bring up ``spec``; on failure tear down what started unless ``keep_on_failure``."""

    def get(self, name: str) -> Cluster | None:
        """The running cluster called ``name``, or None."""

    def delete(self, name: str, *, progress: Progress) -> bool:
        """Remove cluster ``name`` entirely; False if there was none."""

    def names(self) -> list[str]:
        """Names of the clusters this backend made that still exist."""
