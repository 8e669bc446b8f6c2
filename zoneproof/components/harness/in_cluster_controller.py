"""The HA controller under test as its in-cluster Deployment, with the replicas' verbs.

``InClusterReplicas`` is a ``ControllerReplicas`` whose replicas are the pods of the
controller's Deployment (``in_cluster.install``): ``start_all`` deploys it with the test's
scope, ``stop_all`` removes it. A replica's identity is its pod name (the Lease
holderIdentity the manifests give it, ``--identity=$(POD_NAME)``), and the API server's
audit log names it too: the pod's ServiceAccount acts with the pod-name extra
(``measure.audit``). Signals get their in-cluster meaning: SIGKILL kills the pod's
containers through the node's runtime (``NodeMachines.kill_pod_containers``: SIGKILL, no
SIGTERM first; on kind ``ctr task kill -s SIGKILL``) and deletes the pod with grace 0 so
the kubelet does not restart them under the same identity (a force delete alone gets
SIGTERM from the kubelet, and a controller that releases its Lease on SIGTERM would hand
over in ~2 s: not a SIGKILL); SIGTERM
deletes it gracefully (its container gets SIGTERM). A replacement pod is the Deployment's.
SIGSTOP and SIGCONT have none (``NO_MEANING``): a pod cannot be frozen through the API.

What the suite tells the controller goes into its container's arguments, in the
reference controller's flags (``--namespaces``, ``--selector``, ``--lease-duration``,
``--renew-deadline``, ``--retry-period``; ``--variant`` when the reference images are to
run a broken variant, ``InCluster.variant``); the Lease stays the manifests' own (their RBAC
names it), so ``ControllerSettings`` must name the same Lease.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness import in_cluster, registry, started
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.controller import ControllerReplicas, ControllerSettings
from zoneproof.components.harness.source import Workloads
from zoneproof.runs import sweep

__all__ = ["CANNOT", "NO_MEANING", "SCOPE_FLAGS", "InClusterReplicas", "replicas_of",
           "scoped_args"]

#: The flags the suite sets in the controller container's arguments (the reference's).
SCOPE_FLAGS = ("--namespaces", "--all-namespaces", "--selector", "--lease-duration",
               "--renew-deadline", "--retry-period", "--variant")
NO_MEANING = {signal.SIGSTOP: "a pod cannot be frozen through the API (SIGSTOP)",
              signal.SIGCONT: "a pod cannot be thawed through the API (SIGCONT)"}
#: What the in-cluster replicas cannot do of ``controller.VERBS``, and why.
CANNOT = {"freeze": "a pod cannot be frozen (SIGSTOP) and thawed through the API",
          "exit-code": "the exit code of a gracefully deleted pod's container is not reliably "
                       "observable (the pod may be gone before its terminated state is read)"}


def scoped_args(args: Iterable[str], settings: ControllerSettings) -> list[str]:
    """``args`` without the scope flags, then the suite's scope in the reference's flags (and
    the reference images' variant, unless the reference itself)."""
    kept = [a for a in args if a.split("=", 1)[0] not in SCOPE_FLAGS]
    variant = settings.component.variant or registry.REFERENCE
    return [*kept, f"--namespaces={','.join(settings.namespaces)}",
            f"--selector={settings.selector}", f"--lease-duration={settings.lease_duration_s}",
            f"--renew-deadline={settings.renew_deadline_s}",
            f"--retry-period={settings.retry_period_s}",
            *([f"--variant={variant}"] if variant != registry.REFERENCE else [])]


class InClusterReplicas(ControllerReplicas):
    """N pods of the in-cluster controller's Deployment; ``stop_all`` removes it."""

    def __init__(self, cluster: Cluster, settings: ControllerSettings, workdir: Path,
                 workloads: Workloads, *, replicas: int = 2) -> None:
        settings.component.validate()
        if (reason := in_cluster.refusal(cluster)) is not None:
            raise errors.ConfigError(reason)
        self.cluster, self.settings, self.workdir = cluster, settings, workdir
        self.count = replicas
        self.identities: list[str] = []
        self.records = {}
        self.api = kube.api_client(cluster.kubeconfig)
        self.workloads = workloads
        self.installed: in_cluster.Installed | None = None
        self.deployment: dict[str, Any] = {}
        self.prefix = ""
        """What every replica's identity starts with (``<Deployment name>-``, after start)."""
        workdir.mkdir(parents=True, exist_ok=True)
        sweep.track_named(cluster.kubeconfig, "Lease", settings.lease_namespace,
                          settings.lease_name)

    def _scope(self, objects: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
        deployments = [o for o in objects if o["kind"] == "Deployment"]
        if len(deployments) != 1:
            raise errors.ConfigError(f"the manifests of the {self.settings.component.label()} "
                                     f"must have one Deployment; they have {len(deployments)}")
        spec = deployments[0]["spec"]
        spec["replicas"] = self.count
        container = spec["template"]["spec"]["containers"][0]
        container["args"] = scoped_args(container.get("args") or [], self.settings)
        return list(objects)

    # -- the replicas' verbs -----------------------------------------------------------
    def start(self, identity: str) -> Any:
        raise errors.ConfigError(f"the in-cluster controller's pods are its Deployment's: "
                                 f"{identity} cannot be started alone (use start_all)")

    def start_all(self) -> None:
        """Deploy the controller with the test's scope; every replica ready."""
        installed = self.installed = in_cluster.install(
            self.cluster, self.settings.component, self.workloads, patch=self._scope)
        started.note(started.Started(self.settings.component, in_cluster=installed.describe()))
        self.deployment = installed.of_kind("Deployment")[0]
        self.prefix = f"{self.deployment['metadata']['name']}-"
        self._refresh()

    def _refresh(self) -> list[str]:
        """The names of the Deployment's pods now; every one joins ``identities``."""
        pods = list(in_cluster.pod_nodes(self.api, self.deployment))
        self.identities += [p for p in pods if p not in self.identities]
        return pods

    def cannot(self, verb: str) -> str | None:
        """Why the pods cannot take ``verb`` (``CANNOT``)."""
        return CANNOT.get(verb)

    def node_of(self, identity: str) -> str:
        """The node replica ``identity``'s pod runs on ('' when unknown or unscheduled)."""
        pod = self._pod(identity) if self.deployment else None
        return str(pod.spec.node_name or "") if pod is not None else ""

    def _pod(self, identity: str) -> Any | None:
        try:
            return client.CoreV1Api(self.api).read_namespaced_pod(
                identity, self.deployment["metadata"]["namespace"])
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def alive(self, identity: str) -> bool:
        """True while the replica's pod exists and is not being deleted."""
        pod = self._pod(identity) if self.deployment else None
        return pod is not None and pod.metadata.deletion_timestamp is None

    def signal(self, identity: str, sig: signal.Signals) -> None:
        """SIGKILL: kill the pod's containers, then delete it with grace 0; SIGTERM: delete it
        gracefully."""
        if sig in NO_MEANING:
            raise errors.ConfigError(f"no in-cluster meaning: {NO_MEANING[sig]}")
        if sig not in (signal.SIGKILL, signal.SIGTERM):
            raise errors.ConfigError(f"no in-cluster meaning for {sig.name}")
        namespace = self.deployment["metadata"]["namespace"]
        if sig is signal.SIGKILL:
            pod = self._pod(identity)
            if pod is None or not pod.spec.node_name:
                raise errors.FaultError(f"pod {namespace}/{identity} is not running on a node")
            machines = facets.facet(self.cluster, Capability.NODE_CONTAINERS)
            if machines.kill_pod_containers(pod.spec.node_name, namespace, identity) == 0:
                raise errors.FaultError(f"pod {namespace}/{identity} has no running container "
                                        f"on {pod.spec.node_name} to kill")
        client.CoreV1Api(self.api).delete_namespaced_pod(
            identity, namespace, grace_period_seconds=0 if sig is signal.SIGKILL else None)

    def wait_exit(self, identity: str, timeout_s: float) -> int | None:
        """Wait until the pod is gone; its container's exit code if it was seen, else None."""
        seen: list[int] = []

        def gone() -> tuple[bool, None]:
            pod = self._pod(identity)
            for status in (pod.status.container_statuses or []) if pod is not None else []:
                if status.state and status.state.terminated is not None:
                    seen.append(int(status.state.terminated.exit_code))
            return pod is None, None

        waiting.wait_for(gone, what=f"pod {identity} gone", timeout_s=timeout_s, interval_s=0.05)
        return seen[-1] if seen else None

    def wait_leader(self, timeout_s: float, *, not_: str = "") -> str:
        """Wait until one of the Deployment's pods (other than ``not_``) holds the Lease."""

        def probe() -> tuple[bool, str]:
            holder = self.holder()
            names = set(self._refresh())
            return holder in names and holder != not_, holder

        return waiting.wait_for(probe, what="a controller pod to hold the Lease",
                                timeout_s=timeout_s, interval_s=0.2)

    def log(self, identity: str) -> str:
        """The replica's container log ('' once the pod is gone)."""
        try:
            return str(client.CoreV1Api(self.api).read_namespaced_pod_log(
                identity, self.deployment["metadata"]["namespace"]))
        except client.ApiException:
            return ""

    def stop_all(self) -> None:
        """Remove the Deployment and everything applied with it, then its Lease."""
        if self.installed is None:
            return
        in_cluster.uninstall(self.installed.describe())
        self.installed = None
        try:
            client.CoordinationV1Api(self.api).delete_namespaced_lease(
                self.settings.lease_name, self.settings.lease_namespace)
        except client.ApiException as exc:
            if exc.status != 404:
                raise


class _Launcher:
    """The controller kind's launcher (``source.Launcher``): the replicas, not started yet."""

    def __init__(self, cluster: Cluster, settings: ControllerSettings, workdir: Path,
                 replicas: int) -> None:
        self.cluster, self.settings, self.workdir, self.replicas = (cluster, settings, workdir,
                                                                    replicas)

    def process(self, component: Component) -> ControllerReplicas:
        return ControllerReplicas(self.cluster, self.settings, self.workdir,
                                  replicas=self.replicas)

    def endpoint(self, component: Component, url: str, ca_bundle: bytes) -> ControllerReplicas:
        raise errors.ConfigError(f"the {component.label()} runs elsewhere: the suite cannot "
                                 "start, signal or stop its replicas")

    def workloads(self, component: Component, workloads: Workloads) -> ControllerReplicas:
        return InClusterReplicas(self.cluster, self.settings, self.workdir, workloads,
                                 replicas=self.replicas)


def replicas_of(cluster: Cluster, settings: ControllerSettings, workdir: Path, *,
                replicas: int = 2) -> ControllerReplicas:
    """The replicas of the controller under test as its source delivers them: host
    processes, or its in-cluster pods (not started yet)."""
    return settings.component.start(_Launcher(cluster, settings, workdir, replicas))
