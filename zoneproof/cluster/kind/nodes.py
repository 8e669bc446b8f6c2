"""What runs inside a kind node container: the kubelet unit, the static control-plane pods
and zoneproof's nftables table (its network cuts).

A static pod (etcd, kube-apiserver, kcm, scheduler) is killed by moving its manifest out of
the kubelet's manifest directory, so the kubelet does not start it again, and SIGKILLing
its containers through containerd (``ctr``, part of containerd, so in every node image); it
is restarted by moving the manifest back. A network cut is an nftables table of zoneproof's
own in the node's network namespace (``nft.TABLE``): made whole in one transaction, deleted
whole on revert (and with the container). The argv builders are pure; the other helpers exec them in the node.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from zoneproof._util import nft, processes
from zoneproof.cluster.kind import docker

__all__ = [
    "APISERVER_PORT",
    "MANIFESTS",
    "PARKED",
    "cut_apiserver_argv",
    "container_filters",
    "cut_argv",
    "kubelet_argv",
    "park_static_pod_argv",
    "park_static_pod",
    "parked_argv",
    "running_argv",
    "pod_names",
    "running_pods_argv",
    "static_pod_parked",
    "static_pod_running",
    "unpark_static_pod",
    "unpark_static_pod_argv",
]

MANIFESTS = "/etc/kubernetes/manifests"
#: Where a killed static pod's manifest waits (outside the kubelet's view).
PARKED = "/etc/kubernetes/zoneproof-parked"
#: containerd's own CLI (part of containerd, so in every node image) in the CRI namespace.
_CTR = "ctr -n k8s.io"
_CONTAINER_ID = re.compile(r"[0-9a-f]{12,64}")
#: Where kind's API servers (and an HA control plane's load balancer) listen.
APISERVER_PORT = 6443


def cut_apiserver_argv(ipv4: Sequence[str], ipv6: Sequence[str] = (),
                       port: int = APISERVER_PORT) -> list[str]:
    """nft, one transaction (``nft.cut_endpoints_argv``): the node's own processes (the
    kubelet, and the host-network pods: kube-proxy, kindnet) and ``port`` of those addresses
    (the API servers, their load balancer) exchange nothing; pod traffic is left alone."""
    return nft.cut_endpoints_argv([(a, port) for a in [*ipv4, *ipv6]])


def cut_argv() -> list[str]:
    """Print zoneproof's table (empty where there is none)."""
    return ["sh", "-c", f"nft list table inet {nft.TABLE} 2>/dev/null || true"]


def _containers_of(pod: str) -> str:
    """Shell: the ids of every container (any state) of static pod ``pod``."""
    label = shlex.quote(f'labels."io.kubernetes.container.name"=={pod}')
    return f"{_CTR} containers ls -q {label}"


def kubelet_argv(action: str) -> list[str]:
    """``systemctl stop|start kubelet``."""
    return ["systemctl", action, "kubelet"]


def park_static_pod_argv(pod: str) -> list[str]:
    """Move ``pod``'s manifest out of the kubelet's sight, then SIGKILL its containers."""
    name = shlex.quote(pod)
    script = (f"mkdir -p {PARKED} && "
              f"if [ -f {MANIFESTS}/{name}.yaml ]; then mv {MANIFESTS}/{name}.yaml {PARKED}/; fi && "
              f"for id in $({_containers_of(pod)}); do "
              f"{_CTR} tasks kill -s SIGKILL \"$id\" 2>/dev/null || true; done")
    return ["sh", "-c", script]


def unpark_static_pod_argv(pod: str) -> list[str]:
    """Put ``pod``'s manifest back (no-op if it never left)."""
    name = shlex.quote(pod)
    return ["sh", "-c", f"if [ -f {PARKED}/{name}.yaml ]; then "
                        f"mv {PARKED}/{name}.yaml {MANIFESTS}/; fi"]


def parked_argv(pod: str) -> list[str]:
    """Exit 0 if ``pod``'s manifest is parked (a fault holds it down), 1 if not."""
    return ["test", "-f", f"{PARKED}/{pod}.yaml"]


def running_argv(pod: str) -> list[str]:
    """Print the ids of the running containers of static pod ``pod``."""
    script = (f"tasks=$({_CTR} tasks ls); for id in $({_containers_of(pod)}); do "
              f"echo \"$tasks\" | awk -v id=\"$id\" '$1 == id && $3 == \"RUNNING\" {{print id}}'; done")
    return ["sh", "-c", script]


def container_filters(namespace: str, pod: str | None = None) -> str:
    """``ctr containers list`` filters: the containers (not sandboxes) of ``namespace``'s
    pods, or of its pod ``pod``, by the runtime's labels."""
    return ",".join((f'labels."io.kubernetes.pod.namespace"=={namespace}',
                     *((f'labels."io.kubernetes.pod.name"=={pod}',) if pod is not None else ()),
                     'labels."io.cri-containerd.kind"==container'))


def running_pods_argv(namespace: str) -> list[str]:
    """Print the pod-name label of every running container of ``namespace``'s pods, through
    containerd's own CLI (``ctr``: the node image has no crictl); ``pod_names`` reads it."""
    filters = container_filters(namespace)
    script = (f'tasks=$({_CTR} tasks ls); for id in $({_CTR} containers list -q "$1"); do '
              'echo "$tasks" | awk -v id="$id" \'$1 == id && $3 == "RUNNING" {f=1} END {exit !f}\' '
              f'&& {_CTR} containers info "$id" | grep -o \'"io.kubernetes.pod.name": *"[^"]*"\'; '
              'done; true')
    return ["sh", "-c", script, "running-pods", filters]


_POD_NAME = re.compile(r'"io\.kubernetes\.pod\.name": *"([^"]*)"')


def pod_names(printed: str) -> list[str]:
    """The pod names ``running_pods_argv`` printed, sorted, each once."""
    return sorted({m[1] for m in _POD_NAME.finditer(printed)})


def park_static_pod(node: str, pod: str) -> None:
    """Kill static pod ``pod`` on ``node`` so that it stays dead."""
    docker.exec_in(node, park_static_pod_argv(pod))


def unpark_static_pod(node: str, pod: str) -> None:
    """Let the kubelet of ``node`` start static pod ``pod`` again."""
    docker.exec_in(node, unpark_static_pod_argv(pod))


def static_pod_parked(node: str, pod: str) -> bool:
    """True if static pod ``pod``'s manifest on ``node`` is parked."""
    try:
        docker.exec_in(node, parked_argv(pod))
    except processes.CommandError as exc:
        if exc.returncode == 1:
            return False
        raise
    return True


def static_pod_running(node: str, pod: str) -> bool:
    """True if a container of static pod ``pod`` runs on ``node`` (per containerd)."""
    out = docker.exec_in(node, running_argv(pod))
    return any(_CONTAINER_ID.fullmatch(line.strip()) for line in out.splitlines())
