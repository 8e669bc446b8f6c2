"""The network of a zoned local bed: a network namespace per zone, links that can be cut.

Each bed gets ``10.213.<index>.0/24`` and network namespaces named ``zp<index>-…`` (the
index is the first free one: creating the bed's ``wan`` namespace reserves it, machine
wide). The ``wan`` namespace routes between every other one over a veth pair each:

- ``zp<i>-wan``: the router, and the load balancer in front of the API servers (its
  address on the host's link, ``lb``);
- ``zp<i>-<n>`` per zone n (1…): the zone's control plane (etcd member, kube-apiserver,
  kcm, scheduler) and its toxiproxy; reached at its ``wire`` address;
- ``zp<i>-<n>k`` per zone: the zone's kubelets (kwok), which reach their zone's API server
  only through the wan, so they can be cut off from it alone;
- the host (this namespace: the suite, the components under test) at ``host``.

Every zone also holds, on its loopback, a ``name`` address per zone: its own zone's is
its own services', the others' are where its toxiproxy listens for their etcd ports and
forwards to their wire addresses. Processes of a zone name other zones by those
addresses only, so every byte between two zones passes a toxiproxy of one of them (latency,
bandwidth, timeouts) and the wan (cuts).

Cuts are policy-routing rules in the wan (``ip rule … blackhole``): packets vanish in the
network, as in a real partition, and the host keeps reaching every zone (the suite
observes both sides of a split). Everything lives in the bed's namespaces: deleting them
removes it all, and the host keeps only the veth into the wan and its route.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from zoneproof import errors
from zoneproof._util import processes

__all__ = ["PREFIX", "Cut", "ZoneNetwork", "allocate", "available", "enter", "exec_argv"]

#: Every bed's namespaces and host veth start with this and the bed's index.
PREFIX = "zp"
_SUBNET = "10.213"
_NETNS_DIR = Path("/run/netns")
_MAX_INDEX = 256
_MAX_ZONES = 15
T = TypeVar("T")


class Cut:
    """Kinds of cut, each a block of rule priorities in the wan (one per zone)."""

    #: The zone's control plane cannot reach the other zones, nor they it (both ways).
    PARTITION = 1000
    #: The zone's kubelets cannot reach any API server (one way: only their packets drop).
    KUBELETS = 2000


def available() -> str | None:
    """None if this process can make network namespaces; else why not (for the fallback)."""
    if os.geteuid() != 0:
        return ("the zoned layout needs root (network namespaces, veth pairs and routing "
                "rules: ip netns/link/rule)")
    if shutil.which("ip") is None or shutil.which("nsenter") is None:
        return ("the zoned layout needs iproute2's `ip` and util-linux's `nsenter` "
                "(apt-get install iproute2 util-linux)")
    return None


def _ip(*args: str) -> str:
    return processes.run(["ip", *args])


def exec_argv(namespace: str, argv: Sequence[str], hostname: str = "") -> list[str]:
    """``argv`` run in network namespace ``namespace`` (nsenter); with ``hostname``, also in
    a UTS namespace of its own under that name (kcm and the scheduler name their Lease
    holder after the host: the zone's are told apart). Each step execs: one pid."""
    entered = ["nsenter", f"--net={_NETNS_DIR / namespace}", "--", *argv]
    if not hostname:
        return entered
    return ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', hostname,
            *entered]


class _Libc:
    """setns(2) for one thread (``os.setns`` is Python >= 3.12)."""

    CLONE_NEWNET = 0x40000000

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(None, use_errno=True)

    def setns(self, namespace: str) -> None:
        fd = os.open(_NETNS_DIR / namespace, os.O_RDONLY)
        try:
            if self.lib.setns(fd, self.CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {namespace}")
        finally:
            os.close(fd)


def enter(namespace: str) -> None:
    """Move the calling thread into network namespace ``namespace`` for good (a worker
    thread's initializer: sockets it opens afterwards are the namespace's)."""
    _Libc().setns(namespace)


@dataclass(frozen=True, slots=True)
class ZoneNetwork:
    """The addresses and namespaces of one zoned bed (pure), and its making and cuts."""

    index: int
    zones: tuple[str, ...]

    # -- names and addresses -----------------------------------------------------------
    def _addr(self, last: int) -> str:
        return f"{_SUBNET}.{self.index}.{last}"

    @property
    def wan(self) -> str:
        """The router namespace (it also runs the load balancer)."""
        return f"{PREFIX}{self.index}-wan"

    @property
    def host_link(self) -> str:
        """The host's end of its veth into the wan."""
        return f"{PREFIX}{self.index}h"

    @property
    def host(self) -> str:
        """The host as the zones reach it (webhooks served from the host bind here)."""
        return self._addr(2)

    @property
    def lb(self) -> str:
        """The load balancer in front of the API servers (the wan's end of the host link)."""
        return self._addr(1)

    def _zone(self, zone: str) -> int:
        try:
            return self.zones.index(zone) + 1
        except ValueError:
            raise errors.FaultError(f"no zone {zone!r} in this bed; zones: "
                                    f"{list(self.zones)}") from None

    def namespace(self, zone: str) -> str:
        """The namespace of ``zone``'s control plane."""
        return f"{PREFIX}{self.index}-{self._zone(zone)}"

    def kubelet_namespace(self, zone: str) -> str:
        """The namespace of ``zone``'s kubelets (kwok)."""
        return f"{self.namespace(zone)}k"

    def wire(self, zone: str) -> str:
        """Where the wan and the host reach ``zone``'s control plane."""
        return self._addr(4 * self._zone(zone) + 2)

    def name(self, zone: str) -> str:
        """How processes in zones address ``zone``'s services (through their toxiproxy)."""
        return self._addr(128 + self._zone(zone))

    def kubelet_address(self, zone: str) -> str:
        """The address of ``zone``'s kubelets' namespace."""
        return self._addr(64 + 4 * self._zone(zone) + 2)

    def namespaces(self) -> list[str]:
        """Every namespace of the bed, the wan first."""
        return [self.wan, *(ns for z in self.zones
                            for ns in (self.namespace(z), self.kubelet_namespace(z)))]

    def addresses(self) -> tuple[str, ...]:
        """Every address a certificate of the bed may be reached at."""
        return (self.lb, self.host, *(a for z in self.zones
                                      for a in (self.wire(z), self.name(z))))

    # -- making it ---------------------------------------------------------------------
    def _link(self, namespace: str, wan_end: str, here: str, peer: str) -> None:
        """A veth from the wan (``wan_end``) into ``namespace`` (``eth0``): ``peer`` on the
        wan's end, ``here`` on the namespace's, a /30; the namespace routes via the wan."""
        _ip("link", "add", wan_end, "netns", self.wan, "type", "veth", "peer", "name", "eth0",
            "netns", namespace)
        _ip("-n", self.wan, "addr", "add", f"{peer}/30", "dev", wan_end)
        _ip("-n", self.wan, "link", "set", wan_end, "up")
        _ip("-n", namespace, "addr", "add", f"{here}/30", "dev", "eth0")
        _ip("-n", namespace, "link", "set", "eth0", "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        _ip("-n", namespace, "route", "add", "default", "via", peer)

    def _peer(self, address: str) -> str:
        """The wan's end of the /30 whose other end is ``address``."""
        prefix, last = address.rsplit(".", 1)
        return f"{prefix}.{int(last) - 1}"

    def create(self) -> None:
        """Make every namespace and link (the wan exists: ``allocate`` made it)."""
        processes.run(exec_argv(self.wan, ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]))
        _ip("-n", self.wan, "link", "set", "lo", "up")
        _ip("link", "add", self.host_link, "type", "veth", "peer", "name", "host",
            "netns", self.wan)
        _ip("addr", "add", f"{self.host}/30", "dev", self.host_link)
        _ip("link", "set", self.host_link, "up")
        _ip("-n", self.wan, "addr", "add", f"{self.lb}/30", "dev", "host")
        _ip("-n", self.wan, "link", "set", "host", "up")
        _ip("route", "add", f"{_SUBNET}.{self.index}.0/24", "via", self.lb)
        for number, zone in enumerate(self.zones, 1):
            for namespace in (self.namespace(zone), self.kubelet_namespace(zone)):
                _ip("netns", "add", namespace)
            self._link(self.namespace(zone), f"z{number}", self.wire(zone),
                       self._peer(self.wire(zone)))
            self._link(self.kubelet_namespace(zone), f"k{number}", self.kubelet_address(zone),
                       self._peer(self.kubelet_address(zone)))
            for other in self.zones:  # its own services' name, and where its proxies listen
                _ip("-n", self.namespace(zone), "addr", "add", f"{self.name(other)}/32",
                    "dev", "lo")
            # the zone's kubelets reach its API server at its name, through the wan
            _ip("-n", self.wan, "route", "add", f"{self.name(zone)}/32", "via",
                self.wire(zone))

    def delete(self) -> list[str]:
        """Remove every namespace of the bed (their links and rules go with them) and the
        host's veth; what was removed. Processes still in them keep them alive: stop those
        first."""
        removed = []
        for namespace in reversed(self.namespaces()):
            if (_NETNS_DIR / namespace).exists():
                with contextlib.suppress(processes.CommandError):
                    _ip("netns", "del", namespace)
                    removed.append(namespace)
        with contextlib.suppress(processes.CommandError):  # gone with the wan, normally
            _ip("link", "del", self.host_link)
        return removed

    # -- cuts ------------------------------------------------------------------------------
    def _rules(self, cut: int, zone: str) -> list[list[str]]:
        number = self._zone(zone)
        priority = str(cut + number)
        if cut == Cut.PARTITION:
            rules = []
            for other, n in ((z, self._zone(z)) for z in self.zones if z != zone):
                rules.append(["iif", f"z{number}", "to", self.wire(other)])
                rules.append(["iif", f"z{n}", "to", self.wire(zone)])
            return [["priority", priority, *r, "blackhole"] for r in rules]
        if cut == Cut.KUBELETS:
            return [["priority", priority, "iif", f"k{number}", "blackhole"]]
        raise ValueError(f"unknown cut {cut}")

    def cut(self, cut: int, zone: str) -> None:
        """Cut ``zone``'s links of kind ``cut`` (idempotent)."""
        self.restore(cut, zone)
        for rule in self._rules(cut, zone):
            _ip("-n", self.wan, "rule", "add", *rule)

    def restore(self, cut: int, zone: str) -> None:
        """Undo ``cut`` of ``zone`` (every rule of its priority; a no-op if none)."""
        priority = str(cut + self._zone(zone))
        for _ in range(64):
            try:
                _ip("-n", self.wan, "rule", "del", "priority", priority)
            except processes.CommandError:
                return

    def cuts(self) -> dict[str, list[str]]:
        """Zone → kinds of cut in force (``partition``, ``kubelets``), from the wan's rules."""
        found: dict[str, list[str]] = {}
        text = _ip("-n", self.wan, "rule", "show")
        for line in text.splitlines():
            priority = int(line.split(":", 1)[0])
            for cut, label in ((Cut.PARTITION, "partition"), (Cut.KUBELETS, "kubelets")):
                if cut < priority <= cut + len(self.zones):
                    zone = self.zones[priority - cut - 1]
                    if label not in found.setdefault(zone, []):
                        found[zone].append(label)
        return found


def _taken() -> set[int]:
    """Indices whose wan namespace exists on this machine."""
    taken = set()
    for path in _NETNS_DIR.glob(f"{PREFIX}*-wan") if _NETNS_DIR.is_dir() else ():
        with contextlib.suppress(ValueError):
            taken.add(int(path.name[len(PREFIX):-len("-wan")]))
    return taken


def allocate(zones: Sequence[str], prepare: Callable[[ZoneNetwork], T]) -> tuple[ZoneNetwork, T]:
    """A network for ``zones`` at the first free index, reserved by making its wan
    namespace (``ip netns add`` fails on a name taken meanwhile: the next index is tried),
    and what ``prepare`` made for it before it was reserved: slow work (keys naming its
    addresses) goes there, so that a SIGKILL finds no namespace its bed's state does not
    record yet."""
    if not 1 <= len(zones) <= _MAX_ZONES:
        raise errors.ConfigError(f"the zoned layout takes 1..{_MAX_ZONES} zones, got "
                                 f"{len(zones)}")
    for index in range(_MAX_INDEX):
        if index in _taken():
            continue
        network = ZoneNetwork(index, tuple(zones))
        prepared = prepare(network)
        try:
            _ip("netns", "add", network.wan)
        except processes.CommandError:
            continue
        return network, prepared
    raise errors.ProvisionError(f"every zoned bed index 0..{_MAX_INDEX - 1} is taken (network "
                                f"namespaces {PREFIX}*-wan): remove leaked beds with "
                                "`zoneproof down --all-leaked`")
