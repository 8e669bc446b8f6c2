"""The suite's side of the node agent: install it, command it, hold the dead-man's switch, remove it.

``install`` applies ``deploy/node-agent`` (server-side apply through the Python client, the
image from ``$ZONEPROOF_NODE_AGENT_IMAGE`` or the one ``zoneproof build --images`` tags) and
waits until an agent runs on every node. ``NodeAgents`` is the Kubelets facet of a cluster
that has agents: it renews its switch Lease (one per suite process, named in each command)
while a fault is active (a daemon thread), writes
each node's command (id, action, bound, switch) into the node's ConfigMap, and returns once
every agent has reported the fault in effect; the revert removes the commands and waits for
the reports. ``remove`` reverts what is left and deletes the agent's namespace.

An install belongs to a run: its objects carry the run's label (``sweep.labels``) and
``hold`` makes the agent a holding of the current run (kind ``node-agent``), so the run's
end removes it — a killed run's keeper too; the agents' switch has reverted their faults
by then.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException

from zoneproof import errors, runs
from zoneproof._util import kube, locations, waiting
from zoneproof.binaries.images import recipe
from zoneproof.cluster.interface import Progress, fault_max_duration_s
from zoneproof.nodeagent.protocol import (
    COMMAND_KEY,
    NAMESPACE,
    REPORT_KEY,
    SWITCH_LEASE,
    Action,
    Command,
    Report,
    State,
    configmap_name,
)
from zoneproof.runs import sweep

__all__ = ["DEPLOY_DIR", "HOLDING", "IMAGE_ENV", "NodeAgents", "hold", "image", "install",
           "installed", "manifests", "reap_held", "remove", "unhold"]

log = logging.getLogger(__name__)

DEPLOY_DIR = locations.suite_path("deploy", "node-agent")
IMAGE_ENV = "ZONEPROOF_NODE_AGENT_IMAGE"
_DAEMONSET = "node-agent"
#: The kind of run holding an installed agent is.
HOLDING = "node-agent"
#: A fault not bounded by the injector (a direct facet call) is reverted by the agent after this.
DEFAULT_MAX_DURATION_S = 600.0
#: The switch: agents revert once it is not renewed for this long.
SWITCH_S = 15.0


def image() -> str:
    """``$ZONEPROOF_NODE_AGENT_IMAGE``, else the tag ``zoneproof build --images`` gives it."""
    return os.environ.get(IMAGE_ENV) or f"{recipe.REPOSITORIES['node-agent']}:{recipe.DEFAULT_TAG}"


def manifests(ref: str) -> list[dict[str, Any]]:
    """The objects of deploy/node-agent (its kustomization's resources), running image ``ref``,
    labelled with the current run (if any)."""
    kustomization = yaml.safe_load((DEPLOY_DIR / "kustomization.yaml").read_text())
    objects = [sweep.labelled(doc) for name in kustomization["resources"]
               for doc in yaml.safe_load_all((DEPLOY_DIR / name).read_text()) if doc]
    for obj in objects:
        if obj["kind"] == "DaemonSet":
            for container in obj["spec"]["template"]["spec"]["containers"]:
                container["image"] = ref
    return objects


def installed(api: client.ApiClient) -> bool:
    """True if the agent's DaemonSet exists."""
    try:
        client.AppsV1Api(api).read_namespaced_daemon_set(_DAEMONSET, NAMESPACE)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def hold(kubeconfig: Path) -> None:
    """The current run removes the agent from the cluster of ``kubeconfig`` when it ends
    (call it before ``install``: a run killed half-way removes it too)."""
    runs.hold_cluster(HOLDING, kubeconfig)


def unhold(kubeconfig: Path) -> None:
    """The current run no longer holds the agent of ``kubeconfig``'s cluster (it was removed)."""
    runs.release_cluster(HOLDING, kubeconfig)


def reap_held(holding: dict[str, Any], progress: Progress) -> None:
    """Remove the agent a run installed (the reaper of holding kind ``node-agent``)."""
    kubeconfig = Path(holding["kubeconfig"])
    if not kubeconfig.is_file():
        raise errors.BackendError(f"cannot remove the node agent: kubeconfig {kubeconfig} is "
                                  f"gone; `kubectl delete namespace {NAMESPACE}` removes it")
    with kube.teardown_client(kubeconfig) as api:
        if installed(api):
            remove(api, progress=progress)


def install(api: client.ApiClient, *, progress: Progress, timeout_s: float = 180.0) -> float:
    """Apply the agent and wait until it runs on every node; the seconds it took."""
    start = time.monotonic()
    ref = image()
    dyn = dynamic.DynamicClient(api)
    for obj in manifests(ref):
        resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        namespace = obj["metadata"].get("namespace")
        resource.server_side_apply(body=obj, name=obj["metadata"]["name"], namespace=namespace,
                                   field_manager="zoneproof", force_conflicts=True)
    nodes = len(client.CoreV1Api(api).list_node().items)

    def rolled_out() -> tuple[bool, str]:
        ds = client.AppsV1Api(api).read_namespaced_daemon_set(_DAEMONSET, NAMESPACE)
        status = ds.status
        ready = (status.number_ready or 0, status.desired_number_scheduled or 0, nodes)
        done = (status.observed_generation == ds.metadata.generation
                and (status.updated_number_scheduled or 0) == nodes and ready[0] == nodes)
        return done, f"ready {ready[0]} of {ready[1]} scheduled, {nodes} nodes"

    try:
        waiting.wait_for(rolled_out, what=f"node agents ({ref}) on every node", timeout_s=timeout_s,
                         interval_s=0.5, ignore=(ApiException,))
    except waiting.WaitTimeout as exc:
        raise errors.BackendError(
            f"the node agent did not start on every node: {exc}. Its image {ref} must be "
            f"pullable by the nodes (or loaded into them, e.g. `kind load image-archive "
            f"<zoneproof build --images archive>`); set {IMAGE_ENV} to an image in your "
            f"registry. `kubectl -n {NAMESPACE} describe pods` says more") from exc
    seconds = time.monotonic() - start
    progress(f"node agent running on {nodes} nodes ({ref}) in {seconds:.1f}s")
    return seconds


def remove(api: client.ApiClient, *, progress: Progress, timeout_s: float = 120.0) -> None:
    """Revert what the agents hold, then delete their namespace (and wait until it is gone)."""
    NodeAgents(api).release_all(timeout_s=timeout_s / 2)
    core = client.CoreV1Api(api)
    try:
        core.delete_namespace(NAMESPACE)
    except ApiException as exc:
        if exc.status not in (404, 409):  # 409: terminating already (the run's sweep)
            raise

    def gone() -> tuple[bool, str]:
        try:
            core.read_namespace(NAMESPACE)
        except ApiException as exc:
            if exc.status == 404:
                return True, "gone"
            raise
        return False, "terminating"

    try:
        waiting.wait_for(gone, what=f"namespace {NAMESPACE} deleted", timeout_s=timeout_s,
                         interval_s=0.5)
    except waiting.WaitTimeout:
        progress(f"node agent: namespace {NAMESPACE} is still terminating (a node that is not "
                 "Ready cannot confirm its pod's deletion); it goes once the node is back")
        return
    progress(f"node agent removed (namespace {NAMESPACE} deleted)")


def _micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Switch:
    """Renews the switch Lease every ``switch_s / 5`` while ``wanted()`` says so."""

    def __init__(self, leases: client.CoordinationV1Api, switch_s: float,
                 wanted: Callable[[], bool]) -> None:
        self._leases, self.switch_s, self._wanted = leases, switch_s, wanted
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.identity = f"zoneproof-suite-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        #: This process's own switch: its faults end when this process stops renewing,
        #: whatever other suite processes do.
        self.name = f"{SWITCH_LEASE}-{self.identity.removeprefix('zoneproof-suite-')}"

    def renew(self) -> None:
        """Create or renew the Lease now."""
        body = {"metadata": {"name": self.name, "namespace": NAMESPACE},
                "spec": {"holderIdentity": self.identity,
                         "leaseDurationSeconds": max(1, round(self.switch_s)),
                         "renewTime": _micro_time()}}
        try:
            self._leases.patch_namespaced_lease(self.name, NAMESPACE, body)
        except ApiException as exc:
            if exc.status != 404:
                raise
            self._leases.create_namespaced_lease(NAMESPACE, body)

    def start(self) -> None:
        """Renew now, then keep renewing (a daemon thread) until ``wanted()`` turns False."""
        self.renew()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="zoneproof-switch",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while self._wanted():
            time.sleep(self.switch_s / 5)
            if not self._wanted():
                return
            try:
                self.renew()
            except Exception as exc:  # the agents revert if renewals fail for a whole switch time
                log.warning("renewing the switch Lease failed: %s", exc)


class NodeAgents:
    """Kubelets and their links through the node agents (the facets of a cluster with agents
    installed)."""

    def __init__(self, api: client.ApiClient, *, switch_s: float = SWITCH_S,
                 timeout_s: float = 60.0) -> None:
        self._core = client.CoreV1Api(api)
        self.timeout_s = timeout_s
        self._held: dict[str, str] = {}  # node → id of the command this object holds there
        self._lock = threading.Lock()
        self._switch = _Switch(client.CoordinationV1Api(api), switch_s, lambda: bool(self._held))

    def stop_kubelets(self, nodes: Iterable[str]) -> dict[str, Report]:
        """Stop the kubelet of every node at once; their reports (all ``active``)."""
        return self._act(nodes, Action.STOP_KUBELET, "stop the kubelet")

    def cut_apiserver(self, nodes: Iterable[str], endpoints: Iterable[tuple[str, int]]
                      ) -> dict[str, Report]:
        """On every node at once, the host's own processes (the kubelet among them) and
        ``endpoints`` (the API servers) exchange nothing; their reports (all ``active``).
        ``revert`` undoes it (as it does whatever an agent holds)."""
        return self._act(nodes, Action.CUT_APISERVER, "cut the API servers off",
                         tuple(sorted(set(endpoints))))

    def _act(self, nodes: Iterable[str], action: Action, what: str,
             endpoints: tuple[tuple[str, int], ...] = ()) -> dict[str, Report]:
        """Command ``action`` on every node at once; their reports (all ``active``).

        Each command carries the injector's bound for the fault (``fault_max_duration_s``),
        else DEFAULT_MAX_DURATION_S; FaultError (after reverting) if an agent did not act.
        """
        nodes = list(nodes)
        bound = fault_max_duration_s.get() or DEFAULT_MAX_DURATION_S
        commands = {node: Command(uuid.uuid4().hex[:12], action, bound, self._switch.name,
                                  endpoints) for node in nodes}
        with self._lock:
            self._held.update({node: c.id for node, c in commands.items()})
        try:
            self._switch.start()
            for node, command in commands.items():
                self._write(node, command)
            reports = self._wait({n: c.id for n, c in commands.items()},
                                 {State.ACTIVE, State.FAILED, State.REFUSED}, "acting")
            wrong = {n: f"{r.state.value}: {r.error}" for n, r in reports.items()
                     if r.state is not State.ACTIVE}
            if wrong:
                raise errors.FaultError(f"the node agent did not {what} on "
                                        f"{sorted(wrong)}: {wrong}")
            return reports
        except BaseException:
            self.revert(nodes)
            raise

    def revert(self, nodes: Iterable[str]) -> dict[str, Report]:
        """Revert every fault an agent holds on ``nodes`` (this object's commands, or any that
        stands: another process's, a killed run's); the reports of the reverted ones."""
        nodes = list(nodes)
        with self._lock:
            held = {node: self._held[node] for node in nodes if node in self._held}
        for node in nodes:
            if node not in held and (standing := self._standing(node)) is not None:
                held[node] = standing
        if not held:
            return {}
        try:
            for node in held:
                self._write(node, None)
            return self._wait(held, {State.REVERTED, State.FAILED, State.REFUSED}, "reverting")
        finally:
            with self._lock:
                for node, command_id in held.items():
                    if self._held.get(node) == command_id:
                        del self._held[node]

    def release_all(self, *, timeout_s: float) -> None:
        """Remove every node's command (whoever wrote it) and wait until no agent holds a fault."""
        try:
            maps = self._core.list_namespaced_config_map(NAMESPACE).items
        except ApiException as exc:
            if exc.status == 404:
                return
            raise
        for cm in maps:
            if (cm.data or {}).get(COMMAND_KEY):
                self._core.patch_namespaced_config_map(cm.metadata.name, NAMESPACE,
                                                       {"data": {COMMAND_KEY: None}})

        def none_active() -> tuple[bool, list[str]]:
            active = [node for node, report in self.reports().items() if report.state is State.ACTIVE]
            return not active, active

        try:
            waiting.wait_for(none_active, what="node agents reverting every fault",
                             timeout_s=timeout_s, interval_s=0.5, ignore=(ApiException,))
        except waiting.WaitTimeout as exc:
            log.warning("%s", exc)

    def reports(self) -> dict[str, Report]:
        """Node → its agent's last report."""
        found = {}
        for cm in self._core.list_namespaced_config_map(NAMESPACE).items:
            report = _report(cm.data)
            if report is not None and cm.metadata.name.startswith("node-"):
                found[cm.metadata.name.removeprefix("node-")] = report
        return found

    def _standing(self, node: str) -> str | None:
        """The id of the command standing on ``node``, or of a fault its agent still holds."""
        try:
            data = self._core.read_namespaced_config_map(configmap_name(node), NAMESPACE).data
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        text = (data or {}).get(COMMAND_KEY)
        if text:
            try:
                return Command.from_json(text).id
            except ValueError:
                pass
        report = _report(data)
        return report.command_id if report is not None and report.state is State.ACTIVE else None

    def _write(self, node: str, command: Command | None) -> None:
        name = configmap_name(node)
        value = command.to_json() if command else None
        try:
            self._core.patch_namespaced_config_map(name, NAMESPACE, {"data": {COMMAND_KEY: value}})
            return
        except ApiException as exc:
            if exc.status != 404:
                raise
        if command is not None:
            self._core.create_namespaced_config_map(NAMESPACE, {
                "metadata": {"name": name, "namespace": NAMESPACE,
                             "labels": {"app.kubernetes.io/part-of": "zoneproof"}},
                "data": {COMMAND_KEY: value}})

    def _wait(self, wanted: dict[str, str], states: set[State], what: str) -> dict[str, Report]:
        """Wait until the report of each node is about its command id and in ``states``."""

        def probe() -> tuple[bool, dict[str, Any]]:
            found: dict[str, Report] = {}
            for node, command_id in wanted.items():
                report = _report(self._core.read_namespaced_config_map(
                    configmap_name(node), NAMESPACE).data)
                if report is not None and report.command_id == command_id and report.state in states:
                    found[node] = report
            missing = {n: "waiting" for n in wanted if n not in found}
            return not missing, (missing or found)

        try:
            result: dict[str, Report] = waiting.wait_for(
                probe, what=f"node agents on {sorted(wanted)} {what}", timeout_s=self.timeout_s,
                interval_s=0.2, ignore=(ApiException,))
        except waiting.WaitTimeout as exc:
            raise errors.FaultError(
                f"the node agent did not answer: {exc}; `kubectl -n {NAMESPACE} logs "
                f"ds/{_DAEMONSET}` says why") from exc
        return result


def _report(data: dict[str, str] | None) -> Report | None:
    text = (data or {}).get(REPORT_KEY)
    if not text:
        return None
    try:
        return Report.from_json(text)
    except ValueError:
        return None
