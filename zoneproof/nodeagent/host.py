"""Commands the agent runs on its host: PID 1's namespaces entered with nsenter, its init system driven.

The agent's pod shares the host's PID namespace (``hostPID``) and is privileged, so
``nsenter --target 1`` enters the mount, UTS, IPC, network and PID namespaces of the host's
init (systemd on kind nodes and most distributions) and runs ``systemctl`` there. The argv
builders are pure; ``run`` executes one and returns its output.
"""

from __future__ import annotations

import subprocess

from zoneproof.nodeagent.protocol import Action

__all__ = ["HostCommandError", "apply_argv", "is_active_argv", "revert_argv", "run"]

_NSENTER = ["nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--"]
_UNIT = {Action.STOP_KUBELET: "kubelet"}
_TIMEOUT_S = 60.0


class HostCommandError(RuntimeError):
    """A host command failed (its argv, exit code and output are in the message)."""


def apply_argv(action: Action) -> list[str]:
    """The host command that puts ``action`` into effect (``systemctl stop kubelet``)."""
    return [*_NSENTER, "systemctl", "stop", _UNIT[action]]


def revert_argv(action: Action) -> list[str]:
    """The host command that undoes ``action`` (``systemctl start kubelet``)."""
    return [*_NSENTER, "systemctl", "start", _UNIT[action]]


def is_active_argv(action: Action) -> list[str]:
    """Exit 0 if the unit ``action`` stops is running (``systemctl is-active --quiet``)."""
    return [*_NSENTER, "systemctl", "is-active", "--quiet", _UNIT[action]]


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
