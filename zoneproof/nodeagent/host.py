"""Commands the agent runs on its host: PID 1's namespaces entered with nsenter, its init
system and its nftables driven.

The agent's pod shares the host's PID namespace (``hostPID``) and is privileged, so
``nsenter --target 1`` enters the mount, UTS, IPC, network and PID namespaces of the host's
init (systemd on kind nodes and most distributions) and runs the host's own ``systemctl``
or ``nft`` there (a host without nft refuses the cut: the report says so). The agent's own
pod is on the pod network, so a cut of the host's processes leaves it talking to the API.
The argv builders are pure; ``run`` executes one and returns its output.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from urllib.parse import urlparse

from zoneproof._util import nft
from zoneproof.nodeagent.protocol import Action, Command

__all__ = ["KUBELET_KUBECONFIG", "HostCommandError", "apply_argv", "kubelet_endpoints",
           "revert_argv", "run"]

#: Where kubeadm's kubelet finds the API server (its ``server:``).
KUBELET_KUBECONFIG = "/etc/kubernetes/kubelet.conf"

_NSENTER = ["nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--"]
_TIMEOUT_S = 60.0


class HostCommandError(RuntimeError):
    """A host command failed (its argv, exit code and output are in the message)."""


def apply_argv(command: Command) -> list[str]:
    """The host command that puts ``command`` into effect (``systemctl stop kubelet``; the
    nft table that cuts its endpoints)."""
    if command.action is Action.CUT_APISERVER:
        return [*_NSENTER, *nft.cut_endpoints_argv(command.endpoints)]
    return [*_NSENTER, "systemctl", "stop", "kubelet"]


def revert_argv(command: Command) -> list[str]:
    """The host command that undoes ``command`` (``systemctl start kubelet``; the table
    deleted)."""
    if command.action is Action.CUT_APISERVER:
        return [*_NSENTER, *nft.uncut_argv()]
    return [*_NSENTER, "systemctl", "start", "kubelet"]


def kubelet_endpoints(run_: Callable[[list[str]], str]) -> tuple[tuple[str, int], ...]:
    """The (address, port)s of the API server the host's kubelet is configured with
    (``KUBELET_KUBECONFIG``'s server, its name resolved on the host: an HA control plane's
    load balancer, which the ``kubernetes`` Service does not list); none where there is no
    such file or name (the suite's endpoints are cut all the same)."""
    try:
        text = run_([*_NSENTER, "sh", "-c", f"sed -n 's/^ *server: *//p' {KUBELET_KUBECONFIG}"])
        url = urlparse(text.split()[0]) if text.split() else None
        if url is None or not url.hostname:
            return ()
        port = url.port or 443
        found = run_([*_NSENTER, "getent", "ahosts", url.hostname])
    except HostCommandError:
        return ()
    return tuple(sorted({(line.split()[0], port) for line in found.splitlines() if line.split()}))


def run(argv: list[str]) -> str:
    """Run ``argv``; its output, or HostCommandError."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HostCommandError(f"{' '.join(argv)}: {exc}") from exc
    if done.returncode != 0:
        raise HostCommandError(f"{' '.join(argv)} exited {done.returncode}: "
                               f"{(done.stderr or done.stdout).strip()[:500]}")
    return done.stdout
