"""chaostoolkit actions: deploy what an experiment protects, inject faults, wait for effects.

Every fault goes through the run's one Injector (revert registered first, bounded by
``max_duration_s``, reverted at the latest when the run closes). ``configuration`` is
injected by chaostoolkit (keys ``zoneproof_*``, see ``settings.Settings``). No
``from __future__ import annotations``: chaostoolkit discovery reads real types.
"""

import inspect
import signal
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.chaos import k8s, session
from zoneproof.cluster import sweep
from zoneproof.components.harness import controller as controllers
from zoneproof.components.harness import webhook as webhooks
from zoneproof.faults import Fault, KillEtcdMember, KillEtcdMembers, StopKubelets, ZoneOutage
from zoneproof.faults.components import KillControllerLeader, StopWebhook
from zoneproof.traffic import admission, tolerant, workloads
from zoneproof.traffic.writer import Writer

__all__ = [
    "cordon_zone",
    "deploy_ha_controller",
    "deploy_webhook",
    "expect_admissions",
    "deploy_workloads",
    "drain_zone",
    "expect_workloads_running",
    "expect_writes",
    "kill_controller_leader",
    "kill_etcd_member",
    "kill_etcd_members",
    "remove_ha_controller",
    "remove_webhook",
    "remove_workloads",
    "revert_faults",
    "start_writer",
    "stop_kubelets",
    "stop_webhook",
    "stop_writer",
    "uncordon_zone",
    "wait_apiserver",
    "wait_controller_leader",
    "wait_nodes",
    "wait_workloads_ready",
    "zone_outage",
]

Configuration = dict[str, Any] | None
_CONTROLLER, _WRITER, _CORDON, _WEBHOOK = "ha-controller", "writer", "cordon-", "webhook"
_NODE_FAULTS = ("stop-kubelets", "zone-outage")
_WORKLOADS = "workloads"
_TOLERANT = "zone-tolerant workload"
ZONE_LABEL = workloads.ZONE_LABEL


# -- workloads --------------------------------------------------------------------------

def deploy_workloads(replicas: int = 3, pdb_max_unavailable: int = 0, timeout_s: float = 90.0,
                     configuration: Configuration = None) -> dict[str, dict[str, str]]:
    """StatefulSet ``db`` and Deployment ``core`` (``replicas`` each, spread over zones) in
    the run's namespace, labelled for the HA controller; waits until all are Ready.
    Returns workload → {pod: node}."""
    if replicas < 1 or pdb_max_unavailable < 0:
        raise errors.ConfigError(f"replicas must be >= 1 and pdb_max_unavailable >= 0, got "
                                 f"{replicas} and {pdb_max_unavailable}")
    run = session.current(configuration)
    run.extras[_WORKLOADS] = _DeleteNamespace(run.api, run.namespace)
    workloads.apply(run.api, namespace=run.namespace, selector=run.settings.selector,
                    replicas=replicas, pdb_max_unavailable=pdb_max_unavailable)
    run.timeline.add("workloads_deployed", run.namespace, replicas=str(replicas),
                     pdb_max_unavailable=str(pdb_max_unavailable))
    return wait_workloads_ready(replicas=replicas, timeout_s=timeout_s, configuration=configuration)


def remove_workloads(configuration: Configuration = None) -> str:
    """Delete the run's workload namespace (not waiting for it to go); its name."""
    run = session.current(configuration)
    run.extras.pop(_WORKLOADS, None)
    _DeleteNamespace(run.api, run.namespace).stop()
    return run.namespace


def _placement(core: client.CoreV1Api, namespace: str) -> dict[str, dict[str, str]]:
    return {w: workloads.ready_pods(core, namespace, w) for w in workloads.WORKLOADS}


def wait_workloads_ready(replicas: int = 3, avoid_zone: str = "",
                         avoid_faulted_nodes: bool = False, timeout_s: float = 90.0,
                         configuration: Configuration = None) -> dict[str, dict[str, str]]:
    """Wait until ``replicas`` pods of each workload are Ready (none terminating), none on a
    node of ``avoid_zone`` nor (``avoid_faulted_nodes``) on a node a kubelet fault of this
    run hit; returns workload → {pod: node}."""
    run = session.current(configuration)
    core = client.CoreV1Api(run.api)
    avoided = set(run.cluster.nodes_by_zone().get(avoid_zone, [])) if avoid_zone else set()
    if avoid_faulted_nodes:
        avoided |= set(_fault_targets(run, _NODE_FAULTS))

    def probe() -> tuple[bool, dict[str, dict[str, str]]]:
        where = _placement(core, run.namespace)
        ok = all(len(pods) == replicas and not set(pods.values()) & avoided
                 for pods in where.values())
        return ok, where

    where = waiting.wait_for(probe, what=f"{replicas} Ready pods of each workload in "
                             f"{run.namespace}" + (f" off {sorted(avoided)}" if avoided else ""),
                             timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))
    run.timeline.add("workloads_ready", run.namespace, placement=repr(where))
    return where


def expect_workloads_running(replicas: int = 3, timeout_s: float = 30.0,
                             configuration: Configuration = None) -> bool:
    """Wait until each workload has ``replicas`` Running pods, none terminating
    (chaostoolkit-kubernetes' phase check, minus its count-terminating-as-Running flaw)."""
    run = session.current(configuration)
    core = client.CoreV1Api(run.api)

    def probe() -> tuple[bool, dict[str, dict[str, str]]]:
        ok = all(k8s.pods_running(run.cluster.kubeconfig, core, namespace=run.namespace,
                                  label_selector=f"workload={w}", min_count=replicas)
                 for w in workloads.WORKLOADS)
        return ok, {w: k8s.pod_states(core, namespace=run.namespace, label_selector=f"workload={w}")
                    for w in workloads.WORKLOADS}

    waiting.wait_for(probe, what=f"{replicas} Running, non-terminating pods of each workload",
                     timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))
    return True


# -- HA controller ----------------------------------------------------------------------

def deploy_ha_controller(replicas: int = 2, variant: str = "", require_leader: bool = True,
                         timeout_s: float = 30.0, configuration: Configuration = None) -> str:
    """Start ``replicas`` replicas of the HA controller acting in the run's namespace
    (``variant`` empty: configuration ``zoneproof_controller_variant``) on a fresh Lease;
    the leader. Without ``require_leader`` a controller that never takes the Lease is
    let run (its deletes are then judged by the concurrent-actors SLO); returns ''."""
    run = session.current(configuration)
    s = run.settings
    settings = controllers.ControllerSettings(
        namespaces=(run.namespace,), selector=s.selector, lease_name=s.lease_name,
        lease_namespace=s.lease_namespace, variant=variant or s.controller_variant,
        command=s.controller_command or controllers.REFERENCE_COMMAND)
    try:  # a Lease left by an earlier run would credit its holder with this run's deletes
        client.CoordinationV1Api(run.api).delete_namespaced_lease(s.lease_name,
                                                                  s.lease_namespace)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    group = controllers.ControllerReplicas(run.cluster, settings, run.workdir / "controller",
                                           replicas=replicas)
    run.extras[_CONTROLLER] = _StopReplicas(group)
    group.start_all()
    try:
        return group.wait_leader(timeout_s)
    except waiting.WaitTimeout:
        if require_leader:
            raise
        run.timeline.add("no_leader", s.lease, variant=settings.variant)
        return ""


def _replicas(run: session.Run) -> controllers.ControllerReplicas:
    extra: _StopReplicas = run.extra(_CONTROLLER)
    return extra.group


def remove_ha_controller(configuration: Configuration = None) -> list[str]:
    """Stop every controller replica of this run; their identities."""
    run = session.current(configuration)
    extra = run.extras.pop(_CONTROLLER, None)
    if not isinstance(extra, _StopReplicas):
        return []
    extra.stop()
    return extra.group.identities


def kill_controller_leader(signal_name: str = "SIGKILL", max_duration_s: float = 300.0,
                           configuration: Configuration = None) -> list[str]:
    """Send ``signal_name`` (SIGKILL or SIGTERM) to the Lease holder; revert restarts it."""
    if signal_name not in ("SIGKILL", "SIGTERM"):
        raise errors.ConfigError(f"signal_name must be SIGKILL or SIGTERM, got {signal_name!r}")
    run = session.current(configuration)
    return list(run.start_fault(_controller_fault(run, signal_name), max_duration_s))


def wait_controller_leader(timeout_s: float = 30.0, configuration: Configuration = None) -> str:
    """Wait until a live replica of this run holds the Lease; its identity."""
    run = session.current(configuration)
    group = _replicas(run)

    def probe() -> tuple[bool, str]:
        holder = group.holder()
        return holder in group.identities and group.alive(holder), holder

    return waiting.wait_for(probe, what="a live controller replica to hold the Lease",
                            timeout_s=timeout_s, interval_s=0.1, ignore=(client.ApiException,))


# -- node and zone faults ---------------------------------------------------------------

def _pick_nodes(by_zone: dict[str, list[str]], count: int, zones: list[str]) -> list[str]:
    """``count`` nodes taking zones in turn (first node of each zone first), no repeats."""
    chosen_zones = zones or sorted(by_zone)
    unknown = [z for z in chosen_zones if z not in by_zone]
    if unknown:
        raise errors.ConfigError(f"unknown zones {unknown}: the cluster has {sorted(by_zone)}")
    columns = [sorted(by_zone[z]) for z in chosen_zones]
    order = [c[i] for i in range(max(map(len, columns), default=0)) for c in columns if i < len(c)]
    if count < 1 or count > len(order):
        raise errors.ConfigError(f"count must be 1..{len(order)} for zones {chosen_zones}, "
                                 f"got {count}")
    return order[:count]


def stop_kubelets(  # noqa: PLR0917 - chaostoolkit discovery skips keyword-only parameters
        nodes: list[str] | None = None, count: int = 1, zones: list[str] | None = None,
        hosting: str = "", max_duration_s: float = 300.0,
        configuration: Configuration = None) -> list[str]:
    """Stop the kubelets of ``nodes``, or of ``count`` nodes spread over ``zones`` (all
    zones when empty), only nodes running a pod of workload ``hosting`` when given (``db``,
    ``core``); the nodes hit."""
    run = session.current(configuration)
    fault = _kubelet_fault(run, nodes, count, zones, hosting)
    return list(run.start_fault(fault, max_duration_s))


def zone_outage(zone: str = "zone-a", max_duration_s: float = 300.0,
                configuration: Configuration = None) -> list[str]:
    """Stop every kubelet of ``zone``; the nodes hit."""
    run = session.current(configuration)
    return list(run.start_fault(ZoneOutage(zone), max_duration_s))


def _fault_targets(run: session.Run, names: tuple[str, ...]) -> list[str]:
    return sorted({t for e in run.timeline.select("fault_injected") if e.subject in names
                   for t in e.detail.get("targets", "").split(",") if t})


def wait_nodes(ready: bool = False, zone: str = "", timeout_s: float = 60.0,
               configuration: Configuration = None) -> list[str]:
    """Wait until the nodes of ``zone`` (empty: every node a kubelet fault of this run hit)
    are Ready (``ready``) or not; their names."""
    run = session.current(configuration)
    nodes = (run.cluster.nodes_by_zone().get(zone, []) if zone
             else _fault_targets(run, _NODE_FAULTS))
    if not nodes:
        raise errors.ConfigError(f"no nodes to wait for (zone {zone!r}, no kubelet fault yet)")
    run.cluster.wait_nodes(nodes, ready=ready, timeout_s=timeout_s)
    return nodes


def revert_faults(fault: str = "", configuration: Configuration = None) -> list[str]:
    """Revert this run's active faults called ``fault`` (all when empty); names reverted."""
    return [r.name for r in session.current(configuration).stop_faults(fault)]


# -- etcd -------------------------------------------------------------------------------

def kill_etcd_member(role: str = "follower", max_duration_s: float = 120.0,
                     configuration: Configuration = None) -> list[str]:
    """SIGKILL one etcd member (``leader``, ``follower`` or a name); revert restarts it."""
    run = session.current(configuration)
    return list(run.start_fault(KillEtcdMember(role), max_duration_s))


def kill_etcd_members(count: int = 2, max_duration_s: float = 120.0,
                      configuration: Configuration = None) -> list[str]:
    """SIGKILL ``count`` etcd members, followers first (2 of 3: quorum lost)."""
    if count < 1:
        raise errors.ConfigError(f"count must be >= 1, got {count}")
    run = session.current(configuration)
    return list(run.start_fault(KillEtcdMembers(count), max_duration_s))


def start_writer(interval_s: float = 0.2, configuration: Configuration = None) -> str:
    """Start the background writer (every acknowledged write recorded); its namespace."""
    if interval_s <= 0:
        raise errors.ConfigError(f"interval_s must be > 0, got {interval_s}")
    run = session.current(configuration)
    namespace = run.namespace.replace(run.settings.namespace, "zp-writes", 1)
    writer = Writer(run.cluster, run.timeline, namespace=namespace, interval_s=interval_s)
    run.extras[_WRITER] = writer.start()
    return namespace


def stop_writer(configuration: Configuration = None) -> dict[str, int]:
    """Stop the writer and verify every acknowledged write; counts."""
    run = session.current(configuration)
    writer = run.extras.pop(_WRITER, None)
    if not isinstance(writer, Writer):
        raise errors.FaultError("no writer running in this run: call start_writer first")
    writer.stop()
    lost = sum(1 for _ in run.timeline.select("write_lost"))
    return {"acknowledged": len(writer.acknowledged), "failed": writer.failed, "lost": lost}


def expect_writes(succeed: bool = True, timeout_s: float = 10.0,
                  configuration: Configuration = None) -> bool:
    """Wait until a write through the API server succeeds (``succeed``) or fails; raises
    if that does not happen within ``timeout_s``."""
    from zoneproof.chaos import probes

    waiting.wait_for(lambda: (probes.write_succeeds(configuration=configuration) == succeed, None),
                     what=f"API writes {'acknowledged' if succeed else 'failing'}",
                     timeout_s=timeout_s, interval_s=0.5)
    return succeed


def wait_apiserver(ready: bool = True, timeout_s: float = 60.0,
                   configuration: Configuration = None) -> bool:
    """Wait until the API server's /readyz answers 200 (``ready``) or not."""
    cluster = session.current(configuration).cluster
    waiting.wait_for(lambda: (cluster.apiserver_ready() == ready, None),
                     what=f"kube-apiserver /readyz {'OK' if ready else 'failing'}",
                     timeout_s=timeout_s)
    return ready


# -- admission webhook ------------------------------------------------------------------

def _admission_namespaces(run: session.Run) -> tuple[str, str]:
    suffix = run.namespace.removeprefix(run.settings.namespace)
    return f"zp-admission{suffix}", f"zp-no-admission{suffix}"


def deploy_webhook(variant: str = "reference", configuration: Configuration = None) -> str:
    """Serve and register the HA-config webhook under test (failurePolicy Fail), plus a
    selected and an unselected namespace for admission attempts; the webhook's URL."""
    run = session.current(configuration)
    hook = webhooks.RunningWebhook(run.cluster, webhooks.WebhookSettings(variant=variant),
                                   run.workdir / "webhook")
    run.extras[_WEBHOOK] = hook
    hook.start()
    selected, unselected = _admission_namespaces(run)
    admission.prepare(run.api, selected=selected, unselected=unselected)
    return hook.url


def remove_webhook(configuration: Configuration = None) -> list[str]:
    """Unregister and stop the webhook; delete the admission namespaces (their names)."""
    run = session.current(configuration)
    hook = run.extras.pop(_WEBHOOK, None)
    if hook is not None:
        hook.stop()
    names = list(_admission_namespaces(run))
    core = client.CoreV1Api(run.api)
    for name in names:
        try:
            core.delete_namespace(name)
        except client.ApiException as exc:
            if exc.status != 404:
                raise
    return names


def stop_webhook(max_duration_s: float = 120.0, configuration: Configuration = None) -> list[str]:
    """SIGKILL the webhook process, leaving it registered; revert serves it again."""
    run = session.current(configuration)
    hook: webhooks.RunningWebhook = run.extra(_WEBHOOK)
    return list(run.start_fault(StopWebhook(hook), max_duration_s))


def expect_admissions(selected_allowed: bool = True, timeout_s: float = 20.0,
                      configuration: Configuration = None) -> dict[str, bool]:
    """Wait until dry-run creates and updates of a selected Deployment are admitted
    (``selected_allowed``) or rejected, while those of an unselected one are admitted."""
    run = session.current(configuration)
    selected, unselected = _admission_namespaces(run)

    def probe() -> tuple[bool, dict[str, bool]]:
        seen = {f"{kind} {op}": admission.attempt(run.api, run.timeline, namespace=ns,
                                                  selected=kind == "selected", operation=op)
                for kind, ns in (("selected", selected), ("unselected", unselected))
                for op in ("create", "update")}
        ok = all(v == (selected_allowed or k.startswith("unselected")) for k, v in seen.items())
        return ok, seen

    return waiting.wait_for(probe, what="admissions as expected "
                            f"(selected {'admitted' if selected_allowed else 'rejected'}, "
                            "unselected admitted)", timeout_s=timeout_s, interval_s=1.0)


# -- a workload the webhook makes zone tolerant -----------------------------------------

def _tolerant_namespace(run: session.Run) -> str:
    return f"zp-tolerant{run.namespace.removeprefix(run.settings.namespace)}"


def _node_zones(run: session.Run) -> dict[str, str]:
    return {node: zone for zone, nodes in run.cluster.nodes_by_zone().items() for node in nodes}


def deploy_zone_tolerant_workload(replicas: int = 3, timeout_s: float = 90.0,
                                  configuration: Configuration = None) -> dict[str, Any]:
    """A ``server`` Deployment in a namespace the webhook (deploy it first) makes zone
    tolerant; fails unless the webhook added a zone spread. Waits until every replica is
    Ready; returns the spread and Ready pods per zone."""
    run = session.current(configuration)
    run.extra(_WEBHOOK)
    namespace = _tolerant_namespace(run)
    run.extras[_TOLERANT] = _DeleteNamespace(run.api, namespace)
    tolerant.apply(run.api, namespace=namespace, zones=sorted(run.cluster.nodes_by_zone()),
                   replicas=replicas)
    spread = tolerant.zone_spread(run.api, namespace)
    zones = _node_zones(run)

    def probe() -> tuple[bool, dict[str, int]]:
        counts = tolerant.ready_per_zone(run.api, namespace, zones)
        return sum(counts.values()) == spread["replicas"], counts

    placed = waiting.wait_for(
        probe, what=f"{spread['replicas']} Ready pods of {namespace}/{tolerant.NAME}",
        timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))
    return {"spread": spread, "ready_per_zone": placed}


def expect_zone_tolerant_available(avoid_zone: str, min_available: int = 0,
                                   timeout_s: float = 30.0,
                                   configuration: Configuration = None) -> dict[str, int]:
    """Wait until enough pods of the zone-tolerant workload are Ready outside ``avoid_zone``:
    ``min_available``, or (0) what its zone spread guarantees, replicas - ceil(replicas /
    zones) and at least 1. Ready pods per zone."""
    run = session.current(configuration)
    namespace, zones = _tolerant_namespace(run), _node_zones(run)
    if min_available <= 0:
        replicas = tolerant.zone_spread(run.api, namespace)["replicas"]
        min_available = max(1, tolerant.guaranteed_available(replicas, len(set(zones.values()))))

    def probe() -> tuple[bool, dict[str, int]]:
        counts = tolerant.ready_per_zone(run.api, namespace, zones)
        return sum(n for z, n in counts.items() if z != avoid_zone) >= min_available, counts

    return waiting.wait_for(probe, what=f">= {min_available} Ready pods of {namespace}/"
                            f"{tolerant.NAME} outside {avoid_zone}", timeout_s=timeout_s,
                            interval_s=0.5, ignore=(client.ApiException,))


def expect_zone_tolerant_spread(timeout_s: float = 90.0,
                                configuration: Configuration = None) -> dict[str, int]:
    """Wait until every replica of the zone-tolerant workload is Ready and the zones differ
    by at most the webhook's maxSkew; Ready pods per zone."""
    run = session.current(configuration)
    namespace, zones = _tolerant_namespace(run), _node_zones(run)
    spread = tolerant.zone_spread(run.api, namespace)

    def probe() -> tuple[bool, dict[str, int]]:
        counts = tolerant.ready_per_zone(run.api, namespace, zones)
        skew = max(counts.values()) - min(counts.values())
        return sum(counts.values()) == spread["replicas"] and skew <= spread["max_skew"], counts

    return waiting.wait_for(probe, what=f"{namespace}/{tolerant.NAME} Ready and spread with "
                            f"skew <= {spread['max_skew']}", timeout_s=timeout_s,
                            interval_s=0.5, ignore=(client.ApiException,))


# -- cordon and drain (chaostoolkit-kubernetes) -----------------------------------------

def cordon_zone(zone: str = "zone-a", configuration: Configuration = None) -> list[str]:
    """Cordon every node of ``zone`` (uncordoned at the latest when the run closes)."""
    run = session.current(configuration)
    run.extras[_CORDON + zone] = _Uncordon(run.cluster.kubeconfig, zone)
    _hold_uncordon(run, zone)
    return k8s.cordon_nodes(run.cluster.kubeconfig, f"{ZONE_LABEL}={zone}")


def drain_zone(zone: str = "zone-a", timeout_s: float = 180.0,
               configuration: Configuration = None) -> list[str]:
    """Cordon and drain every node of ``zone`` by eviction (PDBs respected, retried)."""
    run = session.current(configuration)
    run.extras[_CORDON + zone] = _Uncordon(run.cluster.kubeconfig, zone)
    _hold_uncordon(run, zone)
    run.timeline.add("drain_started", zone)
    drained = k8s.drain_nodes(run.cluster.kubeconfig, f"{ZONE_LABEL}={zone}", timeout_s=timeout_s)
    run.timeline.add("drain_finished", zone, nodes=",".join(drained))
    return drained


def uncordon_zone(zone: str = "zone-a", configuration: Configuration = None) -> list[str]:
    """Uncordon every node of ``zone``."""
    run = session.current(configuration)
    extra = run.extras.pop(_CORDON + zone, None)
    if extra is not None:
        extra.stop()
    return k8s.uncordon_nodes(run.cluster.kubeconfig, f"{ZONE_LABEL}={zone}")


def _hold_uncordon(run: session.Run, zone: str) -> None:
    """The zoneproof run uncordons the zone's nodes when it ends, however it ends."""
    sweep.hold_uncordon(run.cluster.kubeconfig, run.cluster.nodes_by_zone().get(zone, []))


class _DeleteNamespace:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api, self.namespace = api, namespace

    def stop(self) -> None:
        try:
            client.CoreV1Api(self.api).delete_namespace(self.namespace)
        except client.ApiException as exc:
            if exc.status != 404:
                raise


class _StopReplicas:
    def __init__(self, group: controllers.ControllerReplicas) -> None:
        self.group = group

    def stop(self) -> None:
        self.group.stop_all()


class _Uncordon:
    def __init__(self, kubeconfig: Any, zone: str) -> None:
        self.kubeconfig, self.zone = kubeconfig, zone

    def stop(self) -> None:
        k8s.uncordon_nodes(self.kubeconfig, f"{ZONE_LABEL}={self.zone}")


# -- what a fault action would hit (the control prints it first) ------------------------

def _controller_fault(run: session.Run, signal_name: str) -> KillControllerLeader:
    return KillControllerLeader(_replicas(run), signal.Signals[signal_name])


def _kubelet_fault(run: session.Run, nodes: list[str] | None, count: int,
                   zones: list[str] | None, hosting: str) -> StopKubelets:
    if nodes:
        return StopKubelets(tuple(nodes))
    by_zone = run.cluster.nodes_by_zone()
    if hosting:
        used = set(workloads.ready_pods(client.CoreV1Api(run.api), run.namespace,
                                        hosting).values())
        by_zone = {z: [n for n in names if n in used] for z, names in by_zone.items()}
    return StopKubelets(tuple(_pick_nodes(by_zone, count, list(zones or []))))


_BUILDERS: dict[str, Callable[[session.Run, dict[str, Any]], Fault]] = {
    "zone_outage": lambda run, a: ZoneOutage(a["zone"]),
    "stop_kubelets": lambda run, a: _kubelet_fault(run, a["nodes"], a["count"], a["zones"],
                                                   a["hosting"]),
    "kill_etcd_member": lambda run, a: KillEtcdMember(a["role"]),
    "kill_etcd_members": lambda run, a: KillEtcdMembers(a["count"]),
    "kill_controller_leader": lambda run, a: _controller_fault(run, a["signal_name"]),
    "stop_webhook": lambda run, a: StopWebhook(run.extra(_WEBHOOK)),
}


def planned_fault(run: session.Run, func: str, arguments: Mapping[str, Any]) -> Fault | None:
    """The fault action ``func`` would inject with ``arguments`` (None: not a fault action)."""
    builder = _BUILDERS.get(func)
    if builder is None:
        return None
    bound = inspect.signature(globals()[func]).bind_partial(**arguments)
    bound.apply_defaults()
    return builder(run, dict(bound.arguments))
