"""The flat local bed as a cluster: its processes, nodes and faults (``LocalCluster``); the
zoned layout (zoned.py) builds on it, the backend (backend.py) makes and opens both."""

from __future__ import annotations

import functools
import logging
import shutil
import signal
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import filelock
import urllib3
from kubernetes import client

from zoneproof import binaries as binaries_
from zoneproof import errors
from zoneproof._util import daemons, processes, reaping, waiting
from zoneproof._util import ports as free_ports
from zoneproof.cluster import _etcd as etcd
from zoneproof.cluster._common import (
    HOSTNAME_LABEL,
    REGION_LABEL,
    ZONE_LABEL,
    ApiCluster,
    Step,
)
from zoneproof.cluster.interface import (
    Capability,
    ClusterStatus,
    ControlPlaneProcess,
    Progress,
)
from zoneproof.cluster.local import options as options_
from zoneproof.cluster.local import pod_resync, ports, render
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import ownership, state

__all__ = ["NAME", "LocalCluster"]

log = logging.getLogger(__name__)

NAME = "local"
#: Kubelets (kwok), etcd members and control-plane processes; faults may disrupt it. No node
#: machines to stop, no images to load. Listed one by one: a new capability is granted only
#: by adding it here. (The zoned layout adds ZONED_CAPABILITIES: zoned.ZonedLocalCluster.)
_CAPABILITIES = frozenset({Capability.STOP_KUBELET, Capability.ETCD_MEMBERS,
                           Capability.CONTROL_PLANE, Capability.DESTRUCTIVE})
#: What only the zoned layout has: zones as failure domains, links (kubelets' among them) to cut.
ZONED_CAPABILITIES = frozenset({Capability.ZONES, Capability.KUBELET_LINKS})

_STOP_TIMEOUT_S = 10.0
_RESYNC_S = 30.0  # a restarted kwok's pods are watched over this long after its Lease can be taken
_START_TIMEOUT_S = {"etcd": 30.0, "kube-apiserver": 120.0, "components": 60.0, "nodes": 60.0}
_NODE_CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "250"}
_insecure = urllib3.PoolManager(cert_reqs="CERT_NONE", retries=False,
                                timeout=urllib3.Timeout(connect=0.5, read=2.0))


class LocalCluster(ApiCluster):
    """A running local bed, reconstructed from its state directory."""

    backend = NAME
    capabilities = _CAPABILITIES

    def __init__(self, paths: render.BedPaths) -> None:
        self.paths = paths
        try:
            data = state.read_json(paths.state)
            self.spec, legacy = ClusterSpec.from_stored(data["spec"])
            self.options = options_.LocalOptions.from_dict(data.get("options", legacy))
            self.ports = ports.Ports.from_dict(data["ports"])
            self.ownership = ownership.Ownership.of_state(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            what = f"no {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
            raise errors.ProvisionError(
                f"{paths.state} is not a bed state zoneproof wrote ({str(what)[:200]}): nothing "
                f"touched; if {paths.root} is yours, remove it by hand") from None
        self.name = self.spec.name
        self.timings = self.spec.timings
        self.kubeconfig = paths.kubeconfig
        self._lock = filelock.FileLock(str(paths.root / "state.lock"))

    # -- state -------------------------------------------------------------------------
    def records(self) -> dict[str, daemons.DaemonRecord]:
        """Process name → record, as last saved."""
        data = state.read_json(self.paths.state)
        return {n: daemons.DaemonRecord.from_dict(r) for n, r in data["processes"].items()}

    def _save_record(self, record: daemons.DaemonRecord) -> None:
        with self._lock:
            data = state.read_json(self.paths.state)
            data["processes"][record.name] = record.to_dict()
            state.write_json(self.paths.state, data)

    def _record(self, name: str) -> daemons.DaemonRecord:
        try:
            return self.records()[name]
        except KeyError:
            raise errors.FaultError(f"cluster {self.name!r} has no process {name!r}; it has: "
                                    f"{sorted(self.records())}") from None

    def set_ownership(self, made: ownership.Ownership) -> None:
        """Store the bed's ownership record."""
        with self._lock:
            data = state.read_json(self.paths.state)
            data[ownership.STATE_KEY] = made.to_dict()
            state.write_json(self.paths.state, data)
        self.ownership = made

    def start_process(self, name: str, argv: list[str]) -> daemons.DaemonRecord:
        """Start (or restart) process ``name`` as the bed's (its uid, not the run's token)
        and record it."""
        record = daemons.start(name, argv, self.paths.logs / f"{name}.log",
                               env={reaping.BED_ENV: self.ownership.uid},
                               drop_env=(reaping.RUN_ENV,))
        self._save_record(record)
        return record

    def _disturb(self) -> None:
        """A fault is about to stop processes of this bed (see ``ownership.disturbed``)."""
        ownership.disturbed(NAME, self.name, self.ownership)

    def liveness(self) -> dict[str, bool]:
        """Every process the bed must run → alive (one never started counts as stopped)."""
        records = self.records()
        return {name: name in records and daemons.alive(records[name])
                for name in self.expected_processes()}

    def expected_processes(self) -> list[str]:
        """Every process the bed runs when complete, in start order."""
        return [*render.etcd_member_names(self.spec), ControlPlaneProcess.APISERVER.value,
                ControlPlaneProcess.CONTROLLER_MANAGER.value, ControlPlaneProcess.SCHEDULER.value,
                *(f"kwok-{group}" for group in self.kwok_groups())]

    def repair(self, progress: Progress) -> list[str]:
        """Start every recorded process that is not running, in start order, waiting for
        each tier's health, then for the bed to be ready; the names started."""
        records = self.records()
        missing = [n for n in self.expected_processes() if n not in records]
        if missing:
            raise errors.ProvisionError(
                f"cluster {self.name!r} was never completed (no {', '.join(missing)}): remove "
                f"it with `zoneproof down --cluster-name {self.name}` and up again")
        dead = [n for n in self.expected_processes() if not daemons.alive(records[n])]
        if not dead:
            return []
        progress(f"cluster {self.name!r}: starting what stopped: {', '.join(dead)}")
        members = self.etcd_members()
        for name in dead:
            if name in members:
                self.restart_etcd_member(name)
            elif name in {c.value for c in ControlPlaneProcess}:
                if name == ControlPlaneProcess.APISERVER:
                    self.wait_etcd_healthy(_START_TIMEOUT_S["etcd"])
                self.restart_component(ControlPlaneProcess(name))
            else:
                self._restart(name)
        self.wait_ready()
        return dead

    def _restart(self, name: str) -> daemons.DaemonRecord:
        old = self._record(name)
        if daemons.alive(old):
            return old
        if not name.startswith("kwok-"):
            return self.start_process(name, list(old.argv))
        nodes = self.kwok_groups()[name.removeprefix("kwok-")]
        before = pod_resync.holders(self._probe_api, nodes)
        record = self.start_process(name, list(old.argv))
        pod_resync.start(self.api, before, self.spec.timings.node_lease_duration_s + _RESYNC_S)
        return record

    def _check_alive(self, record: daemons.DaemonRecord) -> None:
        if not daemons.alive(record):
            log_tail = processes.tail(Path(record.log).read_text(errors="replace"), 15)
            raise errors.ProvisionError(
                f"{record.name} exited while starting (log {record.log}):\n{log_tail}")

    # -- health ------------------------------------------------------------------------
    def etcd_url(self, member: str) -> str:
        """Client URL of etcd member ``member``."""
        index = render.etcd_member_names(self.spec).index(member)
        return render.etcd_url(self.ports.etcd_client[index])

    @functools.cached_property
    def etcd_pool(self) -> urllib3.PoolManager:
        """https to the members with zoneproof's own client certificate of the etcd CA."""
        return etcd.tls_pool(self.paths.cert("etcd-ca"), self.paths.cert("etcd-health"),
                             self.paths.key("etcd-health"))

    def _healthz(self, port: int, host: str = "127.0.0.1", path: str = "/healthz") -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            try:
                return _insecure.request("GET", f"https://{host}:{port}{path}").status == 200
            except urllib3.exceptions.HTTPError:
                return False

    def _wait_healthy(self, record: daemons.DaemonRecord, healthy: Callable[[], bool],
                      timeout_s: float) -> None:
        def probe() -> tuple[bool, str]:
            self._check_alive(record)
            return healthy(), f"{record.name} not healthy yet"

        waiting.wait_for(probe, what=f"{record.name} healthy", timeout_s=timeout_s,
                         interval_s=0.1)

    def _component_health(self, component: ControlPlaneProcess) -> Callable[[], bool]:
        if component is ControlPlaneProcess.APISERVER:
            return self.apiserver_ready
        port = (self.ports.controller_manager if component is ControlPlaneProcess.CONTROLLER_MANAGER
                else self.ports.scheduler)
        return lambda: self._healthz(port)

    # -- creation steps ----------------------------------------------------------------
    def start_etcd(self, bins: binaries_.Binaries) -> None:
        """Start every etcd member and wait until each reports health (raft has a leader)."""
        records = [self.start_process(name, render.etcd_argv(bins.etcd, self.spec, self.ports,
                                                             self.paths, i))
                   for i, name in enumerate(render.etcd_member_names(self.spec))]
        for record in records:
            self._wait_healthy(record, functools.partial(etcd.healthy, self.etcd_url(record.name),
                                                         self.etcd_pool),
                               _START_TIMEOUT_S["etcd"])

    def start_apiserver(self, bins: binaries_.Binaries) -> None:
        """Start kube-apiserver and wait for /readyz."""
        record = self.start_process(ControlPlaneProcess.APISERVER, render.apiserver_argv(
            bins.kube_apiserver, self.spec, self.ports, self.paths))
        self._wait_healthy(record, self.apiserver_ready, _START_TIMEOUT_S["kube-apiserver"])

    def start_controllers(self, bins: binaries_.Binaries) -> None:
        """Start kcm and the scheduler (health is awaited in the last step)."""
        self.start_process(ControlPlaneProcess.CONTROLLER_MANAGER, render.controller_manager_argv(
            bins.kube_controller_manager, self.spec, self.ports, self.paths))
        self.start_process(ControlPlaneProcess.SCHEDULER, render.scheduler_argv(
            bins.kube_scheduler, self.ports, self.paths))

    def kwok_groups(self) -> dict[str, list[str]]:
        """kwok process group → the nodes it fakes (a node each, or a zone each)."""
        by_zone = self.spec.nodes_by_zone()
        if self.options.kwok_per == "zone":
            return by_zone
        return {node: [node] for nodes in by_zone.values() for node in nodes}

    def create_nodes(self, bins: binaries_.Binaries) -> None:
        """Create the Node objects with zone labels, and the kwok processes that run them."""
        for zone, names in self.spec.nodes_by_zone().items():
            for node in names:
                self.core.create_node(self._node_body(zone, node))
        for index, group in enumerate(self.kwok_groups()):
            self.start_process(f"kwok-{group}", render.kwok_argv(
                bins.kwok, self.spec, self.paths, bins.kwok_stages, group=group, index=index,
                kwok_per=self.options.kwok_per))

    def _node_body(self, zone: str, node: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {ZONE_LABEL: zone, REGION_LABEL: self.spec.region,
                                    HOSTNAME_LABEL: node, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64", "type": "kwok",
                                    "zoneproof.dev/cluster": self.name}},
            "status": {"capacity": _NODE_CAPACITY, "allocatable": _NODE_CAPACITY},
        }

    def wait_ready(self) -> None:
        """Wait for kcm and scheduler health, every node Ready and the default ServiceAccount."""
        records = self.records()
        for component in (ControlPlaneProcess.CONTROLLER_MANAGER, ControlPlaneProcess.SCHEDULER):
            self._wait_healthy(records[component], self._component_health(component),
                               _START_TIMEOUT_S["components"])
        self.wait_ready_nodes()

    def wait_ready_nodes(self) -> None:
        """Wait for every node Ready and the default ServiceAccount."""
        nodes = [n for names in self.spec.nodes_by_zone().values() for n in names]
        self.wait_nodes(nodes, ready=True, timeout_s=_START_TIMEOUT_S["nodes"])
        waiting.wait_for(
            lambda: (self.core.read_namespaced_service_account("default", "default") is not None,
                     None),
            what="ServiceAccount default/default (kcm's serviceaccount controller)",
            timeout_s=_START_TIMEOUT_S["components"], ignore=(client.ApiException,))

    # -- fault primitives --------------------------------------------------------------
    def _kwok_group_of(self, node: str) -> str:
        for group, nodes in self.kwok_groups().items():
            if node in nodes:
                if len(nodes) > 1:
                    raise errors.FaultError(
                        f"kwok runs per zone in cluster {self.name!r} (kwok_per=zone), so "
                        f"node {node!r} cannot stop alone: use zone_down({group!r}) or a bed "
                        "with kwok_per=node")
                return group
        raise errors.FaultError(f"no node {node!r} in cluster {self.name!r}; nodes: "
                                f"{sorted(n for ns in self.kwok_groups().values() for n in ns)}")

    def stop_kubelet(self, node: str) -> None:
        """Stop the kwok process faking ``node``'s kubelet: no more lease renewals."""
        self._disturb()
        daemons.stop(self._record(f"kwok-{self._kwok_group_of(node)}"), timeout_s=_STOP_TIMEOUT_S)

    def start_kubelet(self, node: str) -> None:
        """Start ``node``'s kwok again; it re-initialises the node to Ready."""
        self._restart(f"kwok-{self._kwok_group_of(node)}")

    def _zone_groups(self, zone: str) -> list[str]:
        nodes = self.spec.nodes_by_zone().get(zone)
        if nodes is None:
            raise errors.FaultError(f"cluster {self.name!r} has no zone {zone!r}; zones: "
                                    f"{list(self.spec.zones)}")
        return [zone] if self.options.kwok_per == "zone" else nodes

    def zone_down(self, zone: str) -> None:
        """Stop the kwok of every node of ``zone`` at once."""
        records = [self._record(f"kwok-{g}") for g in self._zone_groups(zone)]
        self._disturb()
        daemons.stop_together(records, timeout_s=_STOP_TIMEOUT_S)

    def zone_up(self, zone: str) -> None:
        """Start the kwok of every node of ``zone`` again."""
        for group in self._zone_groups(zone):
            self._restart(f"kwok-{group}")

    def etcd_members(self) -> list[str]:
        """``etcd-0`` … ``etcd-<n-1>``."""
        return render.etcd_member_names(self.spec)

    def etcd_leader(self) -> str:
        """The member whose id is the leader id reported by the live members."""
        return etcd.leader({m: self.etcd_url(m) for m in self.etcd_members()}, self.name,
                           self.etcd_pool)

    def audit_log(self) -> Path:
        """The API server's audit log of pod deletions."""
        return self.paths.audit_log

    def save_logs(self, directory: Path) -> list[Path]:
        """Copy the log of every process of the bed (etcd, control plane, kwok); the audit
        log is the bed's ``audit_log``, kept apart."""
        directory.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copy2(log, directory / log.name))
                for log in sorted(self.paths.logs.glob("*.log")) if log != self.paths.audit_log]

    def etcd_member_healthy(self, member: str) -> bool:
        """True if ``member`` answers /health with health true."""
        return etcd.healthy(self.etcd_url(member), self.etcd_pool)

    def kill_etcd_member(self, member: str) -> None:
        """SIGKILL etcd member ``member``."""
        self._disturb()
        daemons.stop(self._record(member), sig=signal.SIGKILL)

    def restart_etcd_member(self, member: str) -> None:
        """Start ``member`` again on its data dir; returns once it serves its client port.

        It reports health only when raft has a quorum again: see ``wait_etcd_healthy``.
        """
        record = self._restart(member)
        port = self.ports.etcd_client[self.etcd_members().index(member)]
        self._wait_healthy(record, lambda: not free_ports.is_free(port), _START_TIMEOUT_S["etcd"])

    def wait_etcd_healthy(self, timeout_s: float = 30.0) -> None:
        """Wait until every member is up and reports health."""
        for member in self.etcd_members():
            waiting.wait_for(functools.partial(etcd.health_probe, self.etcd_url(member),
                                               self.etcd_pool),
                             what=f"{member} healthy", timeout_s=timeout_s)

    def kill_component(self, component: ControlPlaneProcess) -> None:
        """SIGKILL a control-plane process."""
        self._disturb()
        daemons.stop(self._record(component), sig=signal.SIGKILL)

    def restart_component(self, component: ControlPlaneProcess) -> None:
        """Start ``component`` again and wait until it is healthy."""
        record = self._restart(component)
        self._wait_healthy(record, self._component_health(component),
                           _START_TIMEOUT_S["kube-apiserver"])

    def component_running(self, component: ControlPlaneProcess) -> bool:
        """True if the process of ``component`` is alive."""
        return daemons.alive(self._record(component))

    def creation_steps(self, bins: binaries_.Binaries) -> list[Step]:
        """The named steps that bring the bed up, in order."""
        spec = self.spec
        return [
            ("certificates and kubeconfig", lambda: None),
            (f"etcd x{spec.etcd_members} (ports {list(self.ports.etcd_client)})",
             lambda: self.start_etcd(bins)),
            (f"kube-apiserver (https://127.0.0.1:{self.ports.apiserver})",
             lambda: self.start_apiserver(bins)),
            ("kube-controller-manager, kube-scheduler", lambda: self.start_controllers(bins)),
            (f"{spec.nodes_per_zone * len(spec.zones)} kwok nodes in zones "
             f"{', '.join(spec.zones)}", lambda: self.create_nodes(bins)),
            ("waiting for controllers, nodes Ready, default ServiceAccount", self.wait_ready),
        ]

    def release_network(self) -> list[str]:
        """Remove what the bed holds outside its processes and directory (nothing: the
        zoned layout's namespaces); what was removed."""
        return []

    def status(self) -> ClusterStatus:
        """Liveness of every process the bed must run (one never started counts as stopped)
        and node readiness (nodes empty if the API server is down)."""
        procs = self.liveness()
        try:
            nodes = self.nodes_ready() if procs.get(ControlPlaneProcess.APISERVER, True) \
                and self.apiserver_ready() \
                else {}
        except (client.ApiException, urllib3.exceptions.HTTPError):
            nodes = {}
        health, reason = ownership.judge(self.ownership, procs)
        return ClusterStatus(self.name, self.backend, self.kubeconfig, procs, nodes,
                             complete=self.ownership.complete, detail=f"{health}: {reason}")


# Teardown order: fake kubelets, then controllers, the API server (it waits on etcd), etcd.
# etcd gets SIGKILL: on SIGTERM each member tries to hand leadership to peers that are
# stopping too (~7 s), and its data is deleted right after anyway.
# (A zoned bed's replicas carry their zone after the role; its balancer and toxiproxies last.)
