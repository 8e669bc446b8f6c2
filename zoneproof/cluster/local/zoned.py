"""The zoned local bed (``--layout zones``): each zone a failure domain with its own control plane.

Per zone (seed 003's failure tolerance ``zone``): one etcd member, one kube-apiserver (its
zone's member as its only etcd, kubeadm's stacked topology), one kube-controller-manager and
one kube-scheduler (leader election on, each talking to its zone's API server), the zone's
kwok nodes, and a toxiproxy carrying its links to the other zones; each zone in network
namespaces of its own (``netns``). Clients outside the zones (the suite, components under
test, users) reach the API servers through ``tcplb`` (round robin, /healthz checks) in the
wan namespace; each zone's own clients use their zone's API server, as kubeadm's
control-plane components do. All API servers write one audit log (appending lines).

kcm and the scheduler run under a supervisor that restarts them when they exit (they do when
they lose their Lease), as the kubelet restarts static pods; faults kill the whole process
group. Processes are named ``<role>-<zone>`` (``etcd-zone-a``, ``kube-apiserver-zone-a``, ...),
``toxiproxy-<zone>``, ``lb`` and ``kwok-<node>``; each runs in its namespace through
``nsenter`` and is recorded like the flat bed's.
"""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import functools
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client

from zoneproof import binaries as binaries_
from zoneproof import errors
from zoneproof._util import daemons, files, kube, waiting
from zoneproof.binaries import resolve
from zoneproof.cluster import _etcd as etcd
from zoneproof.cluster._common import Step
from zoneproof.cluster.interface import ControlPlaneProcess, ZoneCut
from zoneproof.cluster.local import netns, render, toxiproxy
from zoneproof.cluster.local.cluster import (
    _CAPABILITIES,
    _START_TIMEOUT_S,
    _STOP_TIMEOUT_S,
    ZONED_CAPABILITIES,
    LocalCluster,
)
from zoneproof.cluster.local.ports import Ports
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import state

__all__ = ["LEADER_ELECTION", "ZonedLocalCluster", "network_state", "write_kubeconfigs",
           "zone_kubeconfig"]

#: kcm's and the scheduler's leader election (lease, renew deadline, retry; seconds): the
#: HA controller's test-friendly timings, far below upstream's 15/10/2.
LEADER_ELECTION = (6, 4, 1)
APISERVER_PORT, KCM_PORT, SCHEDULER_PORT = 6443, 10257, 10259
_LB = "lb"
#: How long a link probe waits for its answer (a round trip at 4 s added each way).
_PROBE_TIMEOUT_S = 10.0
_ROLES = (ControlPlaneProcess.APISERVER.value, ControlPlaneProcess.CONTROLLER_MANAGER.value,
          ControlPlaneProcess.SCHEDULER.value)


def _kubeconfig(name: str, server: str, paths: render.BedPaths, cert: str) -> str:
    return render.kubeconfig_yaml(name, 0, paths, cert=cert).replace(
        "https://127.0.0.1:0", server)


def zone_kubeconfig(paths: render.BedPaths, zone: str, cert: str = "admin") -> Path:
    """The kubeconfig of ``zone``'s own clients (``cert`` admin: kcm, scheduler; kwok;
    ``host``: the admin's, for this host)."""
    return paths.root / f"{cert}-{zone}.kubeconfig"


def write_kubeconfigs(spec: ClusterSpec, network: netns.ZoneNetwork,
                      paths: render.BedPaths) -> None:
    """The admin kubeconfig (through the load balancer) and each zone's own (its server)."""
    lb = f"https://{network.lb}:{APISERVER_PORT}"
    files.write_private(paths.kubeconfig, _kubeconfig(spec.name, lb, paths, "admin"))
    files.write_private(paths.kwok_kubeconfig, _kubeconfig(spec.name, lb, paths, "kwok"))
    for zone in spec.zones:
        own = f"https://{network.name(zone)}:{APISERVER_PORT}"
        for cert in ("admin", "kwok"):
            files.write_private(zone_kubeconfig(paths, zone, cert),
                                _kubeconfig(spec.name, own, paths, cert))
        files.write_private(zone_kubeconfig(paths, zone, "host"), _kubeconfig(
            spec.name, f"https://{network.wire(zone)}:{APISERVER_PORT}", paths, "admin"))


class ZonedLocalCluster(LocalCluster):
    """A running zoned local bed, reconstructed from its state directory."""

    capabilities = _CAPABILITIES | ZONED_CAPABILITIES

    def __init__(self, paths: render.BedPaths) -> None:
        super().__init__(paths)
        stored = state.read_json(paths.state)["network"]
        self.network = netns.ZoneNetwork(int(stored["index"]), tuple(stored["zones"]))
        self._links_lock = threading.Lock()
        self._probers: dict[str, concurrent.futures.ThreadPoolExecutor] = {}
        self._local = threading.local()
        #: render's argv functions take a port block; every flag naming one is set here
        self._no_ports = Ports.from_base(1, len(self.spec.zones))

    @property
    def host_address(self) -> str:
        """This host as the zones' API servers reach it (webhooks served here bind it)."""
        return self.network.host

    # -- names -------------------------------------------------------------------------
    def etcd_members(self) -> list[str]:
        """``etcd-<zone>`` per zone."""
        return [f"etcd-{zone}" for zone in self.spec.zones]

    def _zone_of(self, name: str) -> str:
        return next(z for z in self.spec.zones if name.endswith(f"-{z}"))

    def etcd_url(self, member: str) -> str:
        """Client URL of ``member`` from the host (its zone's wire address)."""
        if member not in self.etcd_members():
            raise errors.FaultError(f"no etcd member {member!r}; members: {self.etcd_members()}")
        return f"https://{self.network.wire(self._zone_of(member))}:{toxiproxy.ETCD_PORTS['etcd-client']}"

    def zone_control_plane(self, zone: str) -> dict[str, str]:
        """Role → process in ``zone``."""
        self.network.namespace(zone)  # FaultError for an unknown zone
        return {"etcd": f"etcd-{zone}", **{role: f"{role}-{zone}" for role in _ROLES}}

    def expected_processes(self) -> list[str]:
        """In start order: toxiproxies, etcd, API servers, the load balancer, kcm and
        scheduler replicas, kwok."""
        zones = self.spec.zones
        return [*(f"toxiproxy-{z}" for z in zones), *self.etcd_members(),
                *(f"{ControlPlaneProcess.APISERVER.value}-{z}" for z in zones), _LB,
                *(f"{role}-{z}" for role in _ROLES[1:] for z in zones),
                *(f"kwok-{group}" for group in self.kwok_groups())]

    # -- argv --------------------------------------------------------------------------
    def _in(self, namespace: str, argv: list[str], zone: str = "") -> list[str]:
        return netns.exec_argv(namespace, argv, hostname=zone)

    def _toxiproxy_argv(self, zone: str) -> list[str]:
        n = self.network
        config = self.paths.root / f"toxiproxy-{zone}.json"
        config.write_text(toxiproxy.config_json(toxiproxy.proxies(
            zone, {z: (n.name(z), n.wire(z)) for z in self.spec.zones})))
        binary = resolve.resolve("toxiproxy-server")
        return self._in(n.namespace(zone), [str(binary), "-host", "0.0.0.0", "-port",
                                            str(toxiproxy.API_PORT), "-config", str(config)])

    def _etcd_argv(self, binary: Path, zone: str) -> list[str]:
        n, ports = self.network, toxiproxy.ETCD_PORTS
        client, peer = ports["etcd-client"], ports["etcd-peer"]
        initial = ",".join(f"etcd-{z}=https://{n.name(z)}:{peer}" for z in self.spec.zones)
        argv = render.etcd_argv(binary, self.spec, self._no_ports, self.paths, 0)
        flags = {"--name": f"etcd-{zone}",
                 "--data-dir": str(self.paths.etcd_data(f"etcd-{zone}")),
                 "--listen-client-urls": f"https://{n.name(zone)}:{client},"
                                         f"https://{n.wire(zone)}:{client}",
                 "--advertise-client-urls": f"https://{n.name(zone)}:{client}",
                 "--listen-peer-urls": f"https://{n.name(zone)}:{peer},"
                                       f"https://{n.wire(zone)}:{peer}",
                 "--initial-advertise-peer-urls": f"https://{n.name(zone)}:{peer}",
                 "--initial-cluster": initial}
        return self._in(n.namespace(zone), _set_flags(argv, flags))

    def _apiserver_argv(self, binary: Path, zone: str) -> list[str]:
        n = self.network
        argv = render.apiserver_argv(binary, self.spec, self._no_ports, self.paths)
        # its own zone's member only, as kubeadm's stacked control plane does: with every
        # member listed, an API server of the majority kept requests on its gRPC connection to
        # a partitioned member until the client's keepalive (30 s + 10 s) gave up
        etcd_server = f"https://{n.name(zone)}:{toxiproxy.ETCD_PORTS['etcd-client']}"
        return self._in(n.namespace(zone), _set_flags(argv, {
            "--etcd-servers": etcd_server, "--bind-address": "0.0.0.0",
            "--secure-port": str(APISERVER_PORT), "--advertise-address": n.wire(zone)}), zone)

    def _controller_argv(self, role: str, binary: Path, zone: str) -> list[str]:
        own = str(zone_kubeconfig(self.paths, zone))
        lease, renew, retry = LEADER_ELECTION
        if role == ControlPlaneProcess.CONTROLLER_MANAGER:
            argv = render.controller_manager_argv(binary, self.spec, self._no_ports,
                                                  self.paths)
            port = KCM_PORT
        else:
            argv = render.scheduler_argv(binary, self._no_ports, self.paths)
            port = SCHEDULER_PORT
        argv = _set_flags(argv, {"--kubeconfig": own, "--authentication-kubeconfig": own,
                                 "--authorization-kubeconfig": own, "--bind-address": "0.0.0.0",
                                 "--secure-port": str(port)})
        argv = [a for a in argv if a != "--leader-elect=false"] + [
            "--leader-elect=true", f"--leader-elect-lease-duration={lease}s",
            f"--leader-elect-renew-deadline={renew}s", f"--leader-elect-retry-period={retry}s"]
        return self._in(self.network.namespace(zone), supervised(argv), zone)

    def _lb_argv(self) -> list[str]:
        config = self.paths.root / "lb"
        config.mkdir(exist_ok=True)
        (config / "envoy.yaml").write_text("# tcplb reads lds.yaml and cds.yaml beside this\n")
        (config / "lds.yaml").write_text(f"port_value: {APISERVER_PORT}\n")
        (config / "cds.yaml").write_text("".join(
            f"- endpoint:\n    address: {self.network.wire(z)}\n    port_value: {APISERVER_PORT}\n"
            for z in self.spec.zones))
        binary = resolve.resolve("tcplb")
        return self._in(self.network.wan, [str(binary), "-c", str(config / "envoy.yaml")])

    # -- creation steps ----------------------------------------------------------------
    def creation_steps(self, bins: binaries_.Binaries) -> list[Step]:
        """Everything started at once (each process retries what it needs, and kcm and the
        scheduler are restarted by their supervisor until their API server answers), then
        waited for: etcd, the API servers and the balancer; then the nodes and readiness.
        Three API servers start on the machine's cores together: waiting tier by tier would
        add their start-up times."""
        spec, n = self.spec, self.network
        zones = ", ".join(spec.zones)
        return [
            (f"network namespaces zp{n.index}-* (10.213.{n.index}.0/24); per zone ({zones}) "
             "a toxiproxy, an etcd member, kube-apiserver, kcm and scheduler; the load balancer",
             lambda: self.start_everything(bins)),
            ("waiting for etcd (a member per zone)", self.wait_etcd_members),
            (f"waiting for every kube-apiserver and https://{n.lb}:{APISERVER_PORT}",
             self.wait_apiservers),
            (f"{spec.nodes_per_zone * len(spec.zones)} kwok nodes in zones {zones}",
             lambda: self.create_nodes(bins)),
            ("waiting for controllers, nodes Ready, default ServiceAccount", self.wait_ready),
        ]

    def start_everything(self, bins: binaries_.Binaries) -> None:
        """The network and every control-plane process, without waiting on any."""
        self.network.create()
        for zone in self.spec.zones:
            self.start_process(f"toxiproxy-{zone}", self._toxiproxy_argv(zone))
        for zone in self.spec.zones:
            self.start_process(f"etcd-{zone}", self._etcd_argv(bins.etcd, zone))
        for zone in self.spec.zones:
            self.start_process(f"{ControlPlaneProcess.APISERVER.value}-{zone}",
                               self._apiserver_argv(bins.kube_apiserver, zone))
        self.start_process(_LB, self._lb_argv())
        self.start_controllers(bins)

    def wait_etcd_members(self) -> None:
        """Every member reports health."""
        for member in self.etcd_members():
            self._wait_healthy(self._record(member), functools.partial(
                etcd.healthy, self.etcd_url(member), self.etcd_pool), _START_TIMEOUT_S["etcd"])

    def wait_apiservers(self) -> None:
        """Every API server's /readyz, then /readyz through the balancer."""
        for zone in self.spec.zones:
            self._wait_healthy(self._record(f"{ControlPlaneProcess.APISERVER.value}-{zone}"),
                               functools.partial(self._ready, zone),
                               _START_TIMEOUT_S["kube-apiserver"])
        self._wait_healthy(self._record(_LB), self.apiserver_ready,
                           _START_TIMEOUT_S["kube-apiserver"])

    def _wait_port(self, name: str, host: str, port: int,
                   timeout_s: float = _START_TIMEOUT_S["etcd"]) -> None:
        self._wait_healthy(self._record(name), functools.partial(_accepts, host, port),
                           timeout_s)

    def _ready(self, zone: str) -> bool:
        return self._healthz(APISERVER_PORT, host=self.network.wire(zone), path="/readyz")

    def start_controllers(self, bins: binaries_.Binaries) -> None:
        """kcm and the scheduler in every zone (health is awaited in the last step)."""
        for role, binary in ((ControlPlaneProcess.CONTROLLER_MANAGER.value, bins.kube_controller_manager),
                             (ControlPlaneProcess.SCHEDULER.value, bins.kube_scheduler)):
            for zone in self.spec.zones:
                self.start_process(f"{role}-{zone}", self._controller_argv(role, binary, zone))

    def _kwok_argv(self, bins: binaries_.Binaries, group: str, index: int) -> list[str]:
        zone = group if self.options.kwok_per == "zone" else self._node_zone(group)
        argv = render.kwok_argv(bins.kwok, self.spec, self.paths, bins.kwok_stages, group=group,
                                index=index, kwok_per=self.options.kwok_per)
        argv = _set_flags(argv, {"--kubeconfig": str(zone_kubeconfig(self.paths, zone, "kwok"))})
        return self._in(self.network.kubelet_namespace(zone), argv)

    def _node_zone(self, node: str) -> str:
        return next(z for z, ns in self.spec.nodes_by_zone().items() if node in ns)

    def create_nodes(self, bins: binaries_.Binaries) -> None:
        """The Node objects, and each node's kwok in its zone's kubelet namespace."""
        for zone, names in self.spec.nodes_by_zone().items():
            for node in names:
                self.core.create_node(self._node_body(zone, node))
        for index, group in enumerate(self.kwok_groups()):
            self.start_process(f"kwok-{group}", self._kwok_argv(bins, group, index))

    def _component_health(self, component: ControlPlaneProcess) -> Callable[[], bool]:
        return lambda: self.component_running(component) and all(
            self._replica_healthy(component, z) for z in self.spec.zones)

    def _replica_healthy(self, component: ControlPlaneProcess, zone: str) -> bool:
        if component is ControlPlaneProcess.APISERVER:
            return self._ready(zone)
        port = KCM_PORT if component is ControlPlaneProcess.CONTROLLER_MANAGER else SCHEDULER_PORT
        return self._healthz(port, host=self.network.wire(zone))

    def wait_ready(self) -> None:
        """Every replica of kcm and the scheduler healthy, nodes Ready, the ServiceAccount."""
        for component in (ControlPlaneProcess.CONTROLLER_MANAGER, ControlPlaneProcess.SCHEDULER):
            for zone in self.spec.zones:
                record = self._record(f"{component.value}-{zone}")
                self._wait_healthy(record, functools.partial(self._replica_healthy, component,
                                                             zone), _START_TIMEOUT_S["components"])
        super().wait_ready_nodes()

    # -- etcd, control plane -----------------------------------------------------------
    def restart_etcd_member(self, member: str) -> None:
        """Start ``member`` again; returns once it serves its client port."""
        record = self._restart(member)
        self._wait_healthy(record, functools.partial(
            _accepts, self.network.wire(self._zone_of(member)),
            toxiproxy.ETCD_PORTS["etcd-client"]), _START_TIMEOUT_S["etcd"])

    def _replicas(self, component: ControlPlaneProcess) -> list[str]:
        return [f"{component.value}-{z}" for z in self.spec.zones]

    def kill_component(self, component: ControlPlaneProcess) -> None:
        """SIGKILL every replica of ``component``."""
        self._disturb()
        _kill_groups([self._record(r) for r in self._replicas(component)], signal.SIGKILL)

    def restart_component(self, component: ControlPlaneProcess) -> None:
        """Start every stopped replica of ``component``; wait until all are healthy."""
        for name in self._replicas(component):
            self._restart(name)
        waiting.wait_for(lambda: (self._component_health(component)(), None),
                         what=f"every {component.value} healthy",
                         timeout_s=_START_TIMEOUT_S["kube-apiserver"])

    def component_running(self, component: ControlPlaneProcess) -> bool:
        """True if ``component`` runs in every zone."""
        records = self.records()
        return all(daemons.alive(records[r]) for r in self._replicas(component))

    # -- zones -------------------------------------------------------------------------
    def zone_processes_alive(self) -> dict[str, bool]:
        """Every zone's API server, kcm and scheduler → alive."""
        records = self.records()
        return {f"{role}-{z}": daemons.alive(records[f"{role}-{z}"])
                for z in self.spec.zones for role in _ROLES}

    def kill_zone_processes(self, zone: str) -> list[str]:
        """SIGKILL ``zone``'s API server, kcm, scheduler and toxiproxy (its end of the links)."""
        names = [*(self.zone_control_plane(zone)[r] for r in _ROLES), f"toxiproxy-{zone}"]
        self._disturb()
        _kill_groups([self._record(n) for n in names], signal.SIGKILL)
        return names

    def restart_zone_processes(self, zone: str) -> list[str]:
        """Start ``zone``'s toxiproxy, API server, kcm and scheduler again (what stopped)."""
        names = [f"toxiproxy-{zone}", *(self.zone_control_plane(zone)[r] for r in _ROLES)]
        for name in names:
            self._restart(name)
        self._wait_port(f"toxiproxy-{zone}", self.network.wire(zone), toxiproxy.API_PORT)
        return names

    def cut_zone(self, zone: str, cut: ZoneCut) -> None:
        """Blackhole ``zone``'s links of kind ``cut`` in the wan."""
        self._disturb()
        self.network.cut(_CUTS[cut], zone)

    def restore_zone(self, zone: str, cut: ZoneCut) -> None:
        """Remove the cut."""
        self.network.restore(_CUTS[cut], zone)

    def cut_kubelet_links(self, zone: str) -> None:
        """Blackhole what ``zone``'s kubelets send (``ZoneCut.KUBELETS``)."""
        self.cut_zone(zone, ZoneCut.KUBELETS)

    def restore_kubelet_links(self, zone: str) -> None:
        """Remove that cut."""
        self.restore_zone(zone, ZoneCut.KUBELETS)

    def _links(self, zone: str) -> list[tuple[str, str]]:
        """(toxiproxy zone, proxy) of every link between ``zone`` and the others (all links
        when ''), from the proxies each toxiproxy holds."""
        n = self.network
        return [(z, p.name) for z in self.spec.zones
                for p in toxiproxy.proxies(z, {o: (n.name(o), n.wire(o)) for o in self.spec.zones})
                if not zone or zone in (z, p.to_zone)]

    def shape_links(self, zone: str, latency_ms: int, jitter_ms: int, bandwidth_kbps: int,
                    timeout_ms: int) -> list[str]:
        """Toxics on every link between ``zone`` and the others (all links: '')."""
        toxics = toxiproxy.Toxics(latency_ms, jitter_ms, bandwidth_kbps, timeout_ms)
        if problems := toxics.problems():
            raise errors.ConfigError("; ".join(problems))
        if zone:
            self.network.namespace(zone)
        self._disturb()
        links = self._links(zone)
        with self._links_lock:
            for where, proxy in links:
                toxiproxy.client(self.network.wire(where)).add_toxics(proxy, toxics)
        return [proxy for _, proxy in links]

    def unshape_links(self) -> None:
        """Remove every toxic of every zone's toxiproxy that runs."""
        records = self.records()
        with self._links_lock:
            for zone in self.spec.zones:
                if daemons.alive(records[f"toxiproxy-{zone}"]):
                    toxiproxy.client(self.network.wire(zone)).reset()

    def link_round_trips(self, source: str) -> dict[str, tuple[float, bool]]:
        """(seconds, answered) of one etcd status request from ``source`` to every other
        zone, over the link as the zone's processes use it (its toxiproxy, the wan)."""
        worker = self._probers.get(source)
        if worker is None:
            worker = self._probers[source] = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix=f"link-probe-{source}",
                initializer=netns.enter, initargs=(self.network.namespace(source),))
        others = [z for z in self.spec.zones if z != source]
        return worker.submit(self._round_trips, others).result()

    def _round_trips(self, others: list[str]) -> dict[str, tuple[float, bool]]:
        """In a zone's prober thread: one timed request to each of ``others``' etcd."""
        found: dict[str, tuple[float, bool]] = {}
        for zone in others:
            url = f"https://{self.network.name(zone)}:{toxiproxy.ETCD_PORTS['etcd-client']}"
            started = time.monotonic()
            try:  # long enough to see the slowest latency the experiments add
                answered = self._probe_pool().request(
                    "POST", f"{url}/v3/maintenance/status", body=b"{}",
                    timeout=urllib3.Timeout(connect=1.0, read=_PROBE_TIMEOUT_S)).status == 200
            except urllib3.exceptions.HTTPError:
                answered = False
            found[zone] = (time.monotonic() - started, answered)
        return found

    def _probe_pool(self) -> urllib3.PoolManager:
        """The calling prober thread's own pool (its connections are its namespace's)."""
        pool: urllib3.PoolManager | None = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = etcd.tls_pool(
                self.paths.cert("etcd-ca"), self.paths.cert("etcd-health"),
                self.paths.key("etcd-health"))
        return pool

    def zone_kubeconfig(self, zone: str) -> Path:
        """The admin kubeconfig of ``zone``'s API server alone, from this host."""
        self.network.namespace(zone)
        return zone_kubeconfig(self.paths, zone, "host")

    def etcd_write(self, member: str, timeout_s: float) -> bool:
        """A put of key ``zoneproof/probe`` through ``member`` alone, acknowledged in time?"""
        body = json.dumps({"key": base64.b64encode(b"zoneproof/probe").decode(),
                           "value": base64.b64encode(str(time.time()).encode()).decode()})
        try:
            response = self.etcd_pool.request(
                "POST", f"{self.etcd_url(member)}/v3/kv/put", body=body,
                timeout=urllib3.Timeout(connect=0.5, read=timeout_s))
        except urllib3.exceptions.HTTPError:
            return False
        return response.status == 200

    def _move_etcd_leader(self, member: str) -> None:
        ids = {m: status["header"]["member_id"] for m in self.etcd_members()
               if (status := etcd.member_status(self.etcd_url(m), self.etcd_pool)) is not None}
        leader = self.etcd_leader()
        if leader == member:
            return
        response = self.etcd_pool.request(
            "POST", f"{self.etcd_url(leader)}/v3/maintenance/transfer-leadership",
            body=json.dumps({"targetID": ids[member]}),
            timeout=urllib3.Timeout(connect=0.5, read=10.0))
        if response.status != 200:
            raise errors.FaultError(f"etcd would not move its leadership from {leader} to "
                                    f"{member}: {response.status} {response.data[:200]!r}")
        waiting.wait_for(lambda: (self.etcd_leader() == member, None),
                         what=f"{member} etcd leader", timeout_s=10, ignore=(errors.FaultError,))

    def _lease_holder(self, name: str) -> str:
        return kube.lease_holder(self.api, "kube-system", name)

    def _lead(self, role: str, zone: str) -> str:
        """Make ``zone``'s replica of ``role`` hold its Lease: the others stopped meanwhile."""
        if self._lease_holder(role).startswith(f"{zone}_"):
            return self._lease_holder(role)
        others = [f"{role}-{z}" for z in self.spec.zones if z != zone]
        self._disturb()
        daemons.stop_together([self._record(o) for o in others], timeout_s=_STOP_TIMEOUT_S)
        try:
            lease = LEADER_ELECTION[0] + 2 * LEADER_ELECTION[2]
            return waiting.wait_for(
                lambda: (h.startswith(f"{zone}_"), h) if (h := self._lease_holder(role))
                else (False, h), what=f"{role} of {zone} to hold its Lease",
                timeout_s=3 * lease, ignore=(client.ApiException,))
        finally:
            for other in others:
                self._restart(other)

    def place_leaders(self, zone: str) -> dict[str, str]:
        """etcd's, kcm's and the scheduler's leaders in ``zone``; who they are."""
        member = self.zone_control_plane(zone)["etcd"]
        self._move_etcd_leader(member)
        placed = {"etcd": member}
        for role in _ROLES[1:]:
            placed[role] = self._lead(role, zone)
        if self.etcd_leader() != member:  # moved meanwhile: once more
            self._move_etcd_leader(member)
        return placed

    def release_network(self) -> list[str]:
        """Remove the bed's namespaces (its processes stopped); what was removed."""
        return self.network.delete()


_CUTS = {ZoneCut.PARTITION: netns.Cut.PARTITION, ZoneCut.KUBELETS: netns.Cut.KUBELETS}


#: Restarts its command whenever it exits, as the kubelet restarts a static pod: kcm and the
#: scheduler exit when they lose their Lease (a zone cut off, its etcd slow). SIGTERM stops
#: both; a fault kills the process group (``_kill_groups``).
_SUPERVISOR = ('trap \'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 0\' TERM INT; '
               'while :; do "$@" & child=$!; wait "$child"; '
               'echo "zoneproof: $1 exited $?, restarting in 2 s"; sleep 2; done')


def supervised(argv: list[str]) -> list[str]:
    """``argv`` under a shell that restarts it whenever it exits."""
    return ["sh", "-c", _SUPERVISOR, "supervise", *argv]


def _kill_groups(records: list[daemons.DaemonRecord], sig: signal.Signals) -> None:
    """``sig`` to each record's process group (a supervisor and what it runs; each daemon
    leads a session of its own), then wait until each record's process is gone."""
    for record in records:
        if daemons.alive(record):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(record.pid, sig)
    for record in records:
        waiting.wait_for(lambda r=record: (not daemons.alive(r), r.pid),  # type: ignore[misc]
                         what=f"{record.name} to exit", timeout_s=_STOP_TIMEOUT_S,
                         interval_s=0.05)


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _set_flags(argv: list[str], flags: dict[str, str]) -> list[str]:
    """``argv`` with each ``--flag VALUE`` of ``flags`` replaced (appended when absent)."""
    out = list(argv)
    for flag, value in flags.items():
        if flag in out:
            out[out.index(flag) + 1] = value
        else:
            out += [flag, value]
    return out


def network_state(network: netns.ZoneNetwork) -> dict[str, Any]:
    """What the state file keeps of the network."""
    return {"index": network.index, "zones": list(network.zones)}
