"""chaostoolkit-kubernetes, wrapped around its known defects.

- **Multi-file KUBECONFIG.** chaosk8s checks ``os.path.exists($KUBECONFIG)``, so
  ``a:b`` falls back to ``http://localhost``; and it loads the file the kubernetes
  client fixed at import time, so a later ``$KUBECONFIG`` is ignored. ``using_kubeconfig``
  points both at one file; ``flatten_kubeconfig`` makes it from a list with kubectl's
  rules (the first file's entries and current-context win; existing files only; relative
  certificate paths are not rewritten).
- **Drain gives up on PDBs.** ``drain_nodes`` raises on the first eviction refused with
  429 (a PodDisruptionBudget); ``kubectl drain`` retries. ``NodeScheduling.drain`` retries
  it. ``NodeScheduling`` is the cordon/drain adapter the fault library's scheduling
  faults act through.
  Inside a zoneproof run, the nodes it cordons or drains are held by the run first
  (``runs.sweep.hold_uncordon``): uncordoned when the run ends, however it ends.
- **Terminating pods count as Running.** ``pods_in_phase`` ignores deletionTimestamp;
  ``pods_running`` requires the pods to be live (not terminating) as well.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from chaosk8s.node import actions as node_actions
from chaosk8s.pod import probes as pod_probes
from chaoslib.exceptions import ActivityFailed
from kubernetes import client
from kubernetes.config import kube_config

from zoneproof._util import waiting
from zoneproof.runs import sweep

__all__ = ["NodeScheduling", "flatten_kubeconfig", "pod_states", "pods_running", "using_kubeconfig"]

log = logging.getLogger(__name__)
_lock = threading.RLock()
#: Text in chaosk8s' error → why kubectl drain would retry (wait) instead of failing.
_RETRIED_REFUSALS = {"disruption budget": "a PodDisruptionBudget",
                     "NamespaceTerminating": "the pod's namespace is being deleted"}


def flatten_kubeconfig(value: str, directory: Path) -> Path:
    """One kubeconfig file for ``value`` ($KUBECONFIG syntax: files joined by ':')."""
    paths = [p for p in value.split(os.pathsep) if p]
    if len(paths) == 1:
        return Path(paths[0]).expanduser()
    merged = _plain(kube_config.KubeConfigMerger(value).config)  # entries: first name wins
    for path in paths:  # kubectl: the first file that sets current-context wins (the client: last)
        doc = yaml.safe_load(Path(path).expanduser().read_text()) or {}
        if doc.get("current-context"):
            merged["current-context"] = doc["current-context"]
            break
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="kubeconfig-", suffix=".yaml", dir=directory)
    with os.fdopen(fd, "w") as out:
        yaml.safe_dump(merged, out)
    return Path(name)


def _plain(node: Any) -> Any:
    """The merger's ConfigNodes (nested in dicts and lists) as plain data."""
    value = node.value if isinstance(node, kube_config.ConfigNode) else node
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@contextlib.contextmanager
def using_kubeconfig(path: Path) -> Iterator[None]:
    """Make chaosk8s use the kubeconfig ``path`` (one file) inside the block."""
    with _lock:
        saved_env = os.environ.get("KUBECONFIG")
        saved_default = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
        os.environ["KUBECONFIG"] = str(path)
        kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(path)
        try:
            yield
        finally:
            kube_config.KUBE_CONFIG_DEFAULT_LOCATION = saved_default
            if saved_env is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = saved_env


class NodeScheduling:
    """``faults.NodeScheduling`` over chaostoolkit-kubernetes: cordon, uncordon and drain
    the Nodes matching a label selector on the cluster of ``kubeconfig`` (one file)."""

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig

    def cordon(self, label_selector: str) -> list[str]:
        """Cordon the nodes matching ``label_selector``; their names."""
        sweep.hold_uncordon(self.kubeconfig, label_selector)
        with using_kubeconfig(self.kubeconfig):
            return list(node_actions.cordon_node(label_selector=label_selector))

    def uncordon(self, label_selector: str) -> list[str]:
        """Uncordon the nodes matching ``label_selector``; their names."""
        with using_kubeconfig(self.kubeconfig):
            return list(node_actions.uncordon_node(label_selector=label_selector))

    def drain(self, label_selector: str, *, timeout_s: float) -> list[str]:
        """Drain like ``kubectl drain``: evictions refused by a PDB, or because the pod's
        namespace is being deleted (the pod goes away by itself), are retried until
        ``timeout_s``."""
        sweep.hold_uncordon(self.kubeconfig, label_selector)

        def attempt() -> tuple[bool, list[str]]:
            with using_kubeconfig(self.kubeconfig):
                try:
                    return True, list(node_actions.drain_nodes(
                        label_selector=label_selector, timeout=int(timeout_s)))
                except ActivityFailed as exc:
                    refusal = next((why for key, why in _RETRIED_REFUSALS.items()
                                    if key in str(exc)), None)
                    if refusal is None:
                        raise
                    log.info("drain %s: an eviction was refused (%s); retrying", label_selector,
                             refusal)
                    return False, [str(exc)[:300]]

        return waiting.wait_for(attempt, what=f"nodes {label_selector} drained (PDBs respected)",
                                timeout_s=timeout_s, interval_s=1.0)


def _live(pod: Any) -> bool:
    return pod.metadata.deletion_timestamp is None


def pod_states(core: client.CoreV1Api, *, namespace: str, label_selector: str) -> dict[str, str]:
    """Pod name → phase, with ``/terminating`` for pods being deleted (for messages)."""
    pods = core.list_namespaced_pod(namespace, label_selector=label_selector).items
    return {p.metadata.name: f"{p.status.phase}{'' if _live(p) else '/terminating'}"
            for p in pods}


def pods_running(kubeconfig: Path, core: client.CoreV1Api, *, namespace: str,
                 label_selector: str, min_count: int) -> bool:
    """True if every pod matching is Running (chaosk8s) and none is terminating, and at least
    ``min_count`` exist."""
    with using_kubeconfig(kubeconfig):
        running = bool(pod_probes.pods_in_phase(label_selector=label_selector, phase="Running",
                                                ns=namespace, raise_on_invalid_phase=False))
    states = pod_states(core, namespace=namespace, label_selector=label_selector)
    return running and len(states) >= min_count and all(
        not s.endswith("/terminating") for s in states.values())
