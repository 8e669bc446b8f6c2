"""The docker calls of the kind backend: daemon checks, node containers, exec, the network.

Thin wrappers over the docker CLI (what kind itself drives), each failing with
CommandError (command, exit code, output tail) or a BackendError that names the fix.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from collections.abc import Sequence

from zoneproof import errors
from zoneproof._util import processes

__all__ = [
    "CLUSTER_LABEL",
    "NETWORK",
    "cgroup_v1",
    "container_action",
    "containers",
    "ensure_daemon",
    "ensure_network",
    "exec_in",
    "gateway",
    "image_exists",
    "ipv4",
    "memory_mib",
    "parse_mem_usage",
    "paused",
    "pin_addresses",
    "remove_network_if_unused",
    "state",
]

#: The label kind puts on every node container: its value is the cluster name.
CLUSTER_LABEL = "io.x-k8s.kind.cluster"
#: The docker network of zoneproof's kind clusters (kind's default is "kind"): a user's
#: clusters never share it, and it is removed with the last of ours.
NETWORK = "zp-kind"
_SETUP_HINT = ("start it (on a machine whose kernel lacks capabilities privileged containers "
               "ask for, `scripts/setup-docker.sh` starts dockerd with a runtime wrapper), "
               "or use --backend local")
_TIMEOUT_S = 120.0


def _docker(*args: str, timeout_s: float = _TIMEOUT_S) -> str:
    return processes.run(["docker", *args], timeout_s=timeout_s)


def ensure_daemon() -> None:
    """Raise BackendError unless the docker CLI exists and its daemon answers."""
    if shutil.which("docker") is None:
        raise errors.BackendError(f"docker is not installed (no `docker` on PATH): install "
                                  f"it and {_SETUP_HINT}")
    try:
        _docker("version", "--format", "{{.Server.Version}}", timeout_s=20)
    except (processes.CommandError, subprocess.TimeoutExpired) as exc:
        raise errors.BackendError(f"the docker daemon is not running or not reachable: "
                                  f"{_SETUP_HINT}.\n{exc}") from exc


def cgroup_v1() -> bool:
    """True if the docker host runs cgroup v1 (kubelet >= 1.35 then needs failCgroupV1: false)."""
    return _docker("info", "--format", "{{.CgroupVersion}}").strip() == "1"


def image_exists(image: str) -> bool:
    """True if ``image`` is in the local image store (nothing is pulled)."""
    try:
        _docker("image", "inspect", "--format", "{{.Id}}", image)
    except processes.CommandError:
        return False
    return True


def containers(*labels: str) -> dict[str, bool]:
    """Container name → running, for every container (also stopped) with all ``labels``."""
    filters = [arg for label in labels for arg in ("--filter", f"label={label}")]
    out = _docker("ps", "-a", *filters, "--format", "{{.Names}}\t{{.State}}")
    found = {}
    for line in out.splitlines():
        name, _, state = line.partition("\t")
        found[name] = state == "running"
    return found


def state(container: str) -> str:
    """The state of ``container``: running, paused, exited, ..., or 'missing'."""
    try:
        return _docker("inspect", "--format", "{{.State.Status}}", container).strip()
    except processes.CommandError:
        return "missing"


def ipv4(container: str) -> str:
    """The IPv4 address of ``container`` on its (first) network."""
    out = _docker("inspect", "--format",
                  "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", container)
    addresses = out.split()
    if not addresses:
        raise errors.BackendError(f"container {container!r} has no IPv4 address (not running?)")
    return addresses[0]


def addresses(container: str, network: str = NETWORK) -> tuple[str, str]:
    """(IPv4, IPv6) of ``container`` on ``network``; empty strings while it is stopped."""
    out = _docker("inspect", "--format",
                  f'{{{{with index .NetworkSettings.Networks "{network}"}}}}'
                  "{{.IPAddress}} {{.GlobalIPv6Address}}{{end}}", container)
    ipv4_, _, ipv6 = out.strip().partition(" ")
    return ipv4_, ipv6.strip()


def pin_addresses(container: str, ipv4_: str, ipv6: str = "", network: str = NETWORK) -> None:
    """Reconnect stopped ``container`` to ``network`` with fixed addresses: its next start keeps
    them (docker otherwise hands out whatever is free, and a node's certificates, kubelet
    --node-ip and etcd peer URLs name the old one)."""
    _docker("network", "disconnect", network, container)
    try:
        _docker("network", "connect", "--alias", container, "--ip", ipv4_,
                *(["--ip6", ipv6] if ipv6 else []), network, container)
    except processes.CommandError as exc:
        _docker("network", "connect", "--alias", container, network, container)
        raise errors.BackendError(
            f"cannot pin {container}'s address on docker network {network} ({exc.output.strip()}); "
            f"the network was not made by zoneproof with a stated subnet: delete zoneproof's kind "
            f"clusters (`zoneproof down --backend kind --cluster-name NAME`) so that it is made again"
        ) from exc


def exec_in(container: str, argv: Sequence[str], *, timeout_s: float = 60.0) -> str:
    """Run ``argv`` inside ``container``; its output (CommandError on failure)."""
    return _docker("exec", container, *argv, timeout_s=timeout_s)


def container_action(action: str, names: Sequence[str]) -> None:
    """``docker stop|start|pause|unpause NAME...`` (stop with no grace: a node lost)."""
    if not names:
        return
    extra = ["--time", "0"] if action == "stop" else []
    _docker(action, *extra, *names)


def paused(names: Sequence[str]) -> list[str]:
    """Those of the containers ``names`` that are paused now."""
    if not names:
        return []
    out = _docker("inspect", "--format", "{{.State.Paused}}", *names)
    return [n for n, state in zip(names, out.split(), strict=True) if state == "true"]


_UNITS = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "kB": 1e3 / 2**20,
          "MB": 1e6 / 2**20, "GB": 1e9 / 2**20}


def parse_mem_usage(usage: str) -> float:
    """MiB in use from docker's ``MemUsage`` column, e.g. ``512.3MiB / 23.4GiB``."""
    amount = usage.split("/", maxsplit=1)[0].strip()
    unit = amount.lstrip("0123456789.")
    if unit not in _UNITS:
        raise errors.BackendError(f"unexpected docker stats memory figure {usage!r}")
    return float(amount[: len(amount) - len(unit)]) * _UNITS[unit]


def memory_mib(names: Sequence[str]) -> dict[str, float]:
    """Container → memory in use (MiB), as ``docker stats`` reports it (cgroup, less cache)."""
    out = _docker("stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}", *names)
    return {name: parse_mem_usage(usage)
            for name, _, usage in (line.partition("\t") for line in out.splitlines())}


def _ipv4_config(network: str) -> tuple[str, str]:
    """(subnet, gateway) of ``network``'s IPv4 pool."""
    data = json.loads(_docker("network", "inspect", network, "--format", "{{json .IPAM.Config}}"))
    for entry in data or []:
        subnet, address = entry.get("Subnet", ""), entry.get("Gateway", "")
        if address and ipaddress.ip_address(address).version == 4:
            return str(subnet), str(address)
    raise errors.BackendError(f"docker network {network!r} has no IPv4 gateway: {data}")


def gateway(network: str = NETWORK) -> str:
    """The IPv4 gateway of ``network``: how containers reach a process on this host."""
    return _ipv4_config(network)[1]


def ensure_network(network: str = NETWORK) -> None:
    """Create ``network`` unless it exists: a masquerading bridge, like kind's own, but with
    its IPv4 subnet stated, since docker pins a stopped node's address (``pin_addresses``)
    only on networks with user-configured subnets. The subnet is the free one docker's
    pool hands a throwaway network of the same name."""
    try:
        _docker("network", "inspect", "--format", "{{.Id}}", network)
        return
    except processes.CommandError:
        pass
    _docker("network", "create", "--driver", "bridge", network)
    try:
        subnet, gateway_ = _ipv4_config(network)
    finally:
        _docker("network", "rm", network)
    _docker("network", "create", "--driver", "bridge", "--subnet", subnet, "--gateway", gateway_,
            "--opt", "com.docker.network.bridge.enable_ip_masquerade=true", network)


def remove_network_if_unused(network: str = NETWORK) -> bool:
    """Remove ``network`` if it exists and no container uses it; True if removed."""
    try:
        attached = json.loads(_docker("network", "inspect", network,
                                      "--format", "{{json .Containers}}"))
    except processes.CommandError:
        return False
    if attached:
        return False
    _docker("network", "rm", network)
    return True
