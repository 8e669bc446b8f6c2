"""chaostoolkit actions: deploy what an experiment protects, inject faults, wait for effects.

One action injects every fault: ``inject_fault`` builds a registered fault kind by name
(``zoneproof.faults.registry``) and runs it through the run's one Injector (revert
registered first, bounded by ``max_duration_s``, reverted at the latest when the run
closes); ``revert_faults`` ends them. ``configuration`` is injected by chaostoolkit (keys
``zoneproof_*``, see ``settings.Settings``). No ``from __future__ import annotations``:
chaostoolkit discovery reads real types.
"""

from collections.abc import Mapping
from typing import Any

from kubernetes import client

from zoneproof import cluster as clusters
from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.chaos import k8s, session
from zoneproof.chaos.zone_actions import (
    place_leaders,
    probe_latency_limits,
    probe_member_writes,
    wait_control_plane_leaders,
    zone_returns,
)
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import controller as controllers
from zoneproof.components.harness import in_cluster, in_cluster_controller
from zoneproof.components.harness import webhook as webhooks
from zoneproof.components.harness.component import IN_CLUSTER
from zoneproof.faults import Effect, Fault, FaultContext, node, registry
from zoneproof.measure.history import ReadMode
from zoneproof.report import artefacts
from zoneproof.slo import metrics
from zoneproof.specs.ha_config import registration
from zoneproof.specs.kubernetes import ZONE_LABEL
from zoneproof.traffic import admission, tolerant, workloads
from zoneproof.traffic.registers import RegisterTraffic, TrafficSettings
from zoneproof.traffic.writer import Writer

__all__ = [
    "deploy_ha_controller",
    "deploy_webhook",
    "deploy_workloads",
    "deploy_zone_tolerant_workload",
    "expect_admissions",
    "expect_leader_zone_components",
    "expect_workloads_running",
    "expect_writes",
    "expect_zone_tolerant_available",
    "expect_zone_tolerant_spread",
    "inject_fault",
    "place_leaders",
    "probe_latency_limits",
    "probe_member_writes",
    "remove_ha_controller",
    "remove_webhook",
    "remove_workloads",
    "revert_faults",
    "start_admission_traffic",
    "start_history_traffic",
    "start_writer",
    "stop_admission_traffic",
    "stop_history_traffic",
    "stop_writer",
    "wait_apiserver",
    "wait_control_plane_leaders",
    "wait_controller_leader",
    "wait_nodes",
    "wait_workloads_ready",
    "zone_returns",
]

#: The namespaces an experiment makes besides its workloads' (``Settings.namespace``), each
#: this stem and the run's suffix: what ``experiment_namespace`` recognises.
NAMESPACE_STEMS = ("zp-writes", "zp-history", "zp-admission", "zp-no-admission", "zp-tolerant")
_WRITES_NS, _HISTORY_NS, _ADMISSION_NS, _NO_ADMISSION_NS, _TOLERANT_NS = NAMESPACE_STEMS


def experiment_namespace(name: str, workloads: str) -> bool:
    """Whether namespace ``name`` is one an experiment makes (``workloads``: the settings'
    namespace), not a test's own: on a user's cluster other tests' namespaces live beside."""
    return any(name.startswith(f"{stem}-") for stem in (workloads, *NAMESPACE_STEMS))

Configuration = dict[str, Any] | None
_CONTROLLER, _WRITER, _WEBHOOK = "ha-controller", "writer", "webhook"
_HISTORY = "register traffic"
_WORKLOADS = "workloads"
_TOLERANT = "zone-tolerant workload"
_ADMISSIONS = "admission traffic"


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
    node of ``avoid_zone`` nor (``avoid_faulted_nodes``) on a node a fault of this run
    turned NotReady; returns workload → {pod: node}."""
    run = session.current(configuration)
    core = client.CoreV1Api(run.api)
    avoided = set(run.cluster.nodes_by_zone().get(avoid_zone, [])) if avoid_zone else set()
    if avoid_faulted_nodes:
        avoided |= set(_not_ready_targets(run))

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

def deploy_ha_controller(replicas: int = 2, require_leader: bool = True, timeout_s: float = 30.0,
                         configuration: Configuration = None) -> str:
    """Start ``replicas`` replicas of the HA controller under test (configuration
    ``zoneproof_components``: host processes, or its in-cluster Deployment) acting in the
    run's namespace on a fresh Lease; the leader. Without ``require_leader`` a controller
    that never takes the Lease is let run (its deletes are then judged by the
    concurrent-actors SLO); returns ''."""
    run = session.current(configuration)
    s = run.settings
    settings = controllers.ControllerSettings(
        namespaces=(run.namespace,), selector=s.selector, lease_name=s.lease_name,
        lease_namespace=s.lease_namespace, component=s.components.controller)
    try:  # a Lease left by an earlier run would credit its holder with this run's deletes
        client.CoordinationV1Api(run.api).delete_namespaced_lease(s.lease_name,
                                                                  s.lease_namespace)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    group = in_cluster_controller.replicas_of(run.cluster, settings, run.workdir / "controller",
                                              replicas=replicas)
    run.extras[_CONTROLLER] = _StopReplicas(group)
    group.start_all()
    run.replica_prefix = group.prefix  # who the audit log's deletes are attributed to
    try:
        return group.wait_leader(timeout_s)
    except waiting.WaitTimeout:
        if require_leader:
            raise
        run.timeline.add("no_leader", s.lease, component=settings.component.label())
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


def wait_controller_leader(timeout_s: float = 30.0, configuration: Configuration = None) -> str:
    """Wait until a live replica of this run holds the Lease; its identity."""
    run = session.current(configuration)
    group = _replicas(run)

    def probe() -> tuple[bool, str]:
        holder = group.holder()
        return bool(holder) and group.alive(holder), holder

    return waiting.wait_for(probe, what="a live controller replica to hold the Lease",
                            timeout_s=timeout_s, interval_s=0.1, ignore=(client.ApiException,))


# -- faults ---------------------------------------------------------------------------

def fault_context(run: session.Run) -> FaultContext:
    """What this run's faults act on: its cluster, API client, workload namespace, the
    components under test it deployed, and the cordon/drain adapter."""
    replicas = run.extras.get(_CONTROLLER)
    webhook = run.extras.get(_WEBHOOK)
    return FaultContext(
        run.cluster, run.api, run.namespace,
        controller=replicas.group if isinstance(replicas, _StopReplicas) else None,
        webhook=webhook if isinstance(webhook, webhooks.RunningWebhook) else None,
        scheduling=k8s.NodeScheduling(run.cluster.kubeconfig))


def inject_fault(fault: str, parameters: dict[str, Any] | None = None,
                 max_duration_s: float = 300.0, configuration: Configuration = None) -> list[str]:
    """Inject the registered fault kind ``fault`` (``stop-kubelets``, ``zone-outage``,
    ``kill-etcd-member``, ...; see ``chaos discover``) with its ``parameters``, reverted
    after ``max_duration_s`` at the latest; what it hit."""
    built = registry.build(fault, parameters)  # ConfigError before anything is touched
    run = session.current(configuration)
    return list(run.start_fault(built, max_duration_s, fault_context(run)))


def planned_fault(func: str, arguments: Mapping[str, Any]) -> Fault | None:
    """The fault the activity ``func`` would inject with ``arguments`` (None: not
    ``inject_fault``)."""
    if func != "inject_fault":
        return None
    return registry.build(str(arguments.get("fault", "")), arguments.get("parameters"))


def _not_ready_targets(run: session.Run) -> list[str]:
    """Every node a fault of this run must turn NotReady."""
    return sorted({t for r in run.injector.records if r.causes(Effect.NODES_NOT_READY)
                   for t in r.targets})


def wait_nodes(ready: bool = False, zone: str = "", timeout_s: float = 60.0,
               configuration: Configuration = None) -> list[str]:
    """Wait until the nodes of ``zone`` (empty: every node a fault of this run must turn
    NotReady) are Ready (``ready``) or not; their names."""
    run = session.current(configuration)
    nodes = run.cluster.nodes_by_zone().get(zone, []) if zone else _not_ready_targets(run)
    if not nodes:
        raise errors.ConfigError(f"no nodes to wait for (zone {zone!r}, no node fault yet)")
    run.cluster.wait_nodes(nodes, ready=ready, timeout_s=timeout_s)
    return nodes


def revert_faults(fault: str = "", configuration: Configuration = None) -> list[str]:
    """Revert this run's active faults of kind ``fault`` (all when empty); kinds reverted."""
    return [r.kind for r in session.current(configuration).stop_faults(fault)]


# -- writes -------------------------------------------------------------------------------

def start_writer(interval_s: float = 0.2, zone: str = "",
                 configuration: Configuration = None) -> str:
    """Start the background writer (every acknowledged write recorded); its namespace.
    With ``zone`` (a cluster whose zones are failure domains) it writes through that zone's
    API server alone, as a client pinned to one server would, not the load balancer."""
    if interval_s <= 0:
        raise errors.ConfigError(f"interval_s must be > 0, got {interval_s}")
    run = session.current(configuration)
    namespace = run.namespace.replace(run.settings.namespace, _WRITES_NS, 1)
    pinned = (facets.facet(run.cluster, Capability.ZONES).zone_kubeconfig(zone) if zone
              else None)
    writer = Writer(run.cluster, run.timeline, namespace=namespace, interval_s=interval_s,
                    kubeconfig=pinned)
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


# -- register traffic with a recorded history ------------------------------------------

# chaostoolkit's discovery lists only positional-or-keyword parameters
def start_history_traffic(read_mode: str = "quorum", rate_ops_s: float = 150.0,  # noqa: PLR0917
                          min_rate_ops_s: float | None = None, clients: int = 16, keys: int = 5,
                          seed: int = 0, configuration: Configuration = None) -> str:
    """Start register traffic (``clients`` threads, ``rate_ops_s`` in total on ``keys``
    ConfigMaps; reads by ``read_mode``: quorum, watch-cache or informer) recording every
    operation; its namespace. Start it >= 5 s before the first fault: the history is void
    when the traffic before the fault ran under ``min_rate_ops_s`` (default: what the
    backend's beds carry, ``Traits.history_min_rate_ops_s``). Stopped, and its history
    saved as ``history.json``, by ``stop_history_traffic`` or when the run closes."""
    try:
        mode = ReadMode(read_mode)
    except ValueError:
        raise errors.ConfigError(f"read_mode must be one of {[m.value for m in ReadMode]}, "
                                 f"got {read_mode!r}") from None
    run = session.current(configuration)
    if _HISTORY in run.extras:
        raise errors.ConfigError("register traffic already runs in this run: one history per "
                                 "run (stop_history_traffic first)")
    namespace = run.namespace.replace(run.settings.namespace, _HISTORY_NS, 1)
    if min_rate_ops_s is None:
        min_rate_ops_s = clusters.backend_type(run.settings.backend).traits.history_min_rate_ops_s
    traffic = RegisterTraffic(run.cluster.kubeconfig, run.timeline, TrafficSettings(
        namespace=namespace, keys=keys, clients=clients, rate_ops_s=rate_ops_s,
        min_rate_ops_s=min_rate_ops_s, read_mode=mode, seed=seed))
    run.extras[_HISTORY] = _SaveHistory(run, traffic.start())
    return namespace


def stop_history_traffic(configuration: Configuration = None) -> dict[str, Any]:
    """Stop the register traffic and save its history (``history.json`` in the run's
    workdir); what it recorded."""
    run = session.current(configuration)
    extra = run.extras.pop(_HISTORY, None)
    if not isinstance(extra, _SaveHistory):
        raise errors.FaultError("no register traffic runs in this run: call "
                                "start_history_traffic first")
    extra.stop()
    history = run.history
    assert history is not None
    done = sum(1 for op in history.operations if op.outcome.definite)
    return {"namespace": history.plan.namespace, "read_mode": str(history.plan.read_mode),
            "operations": len(history.operations), "definite": done}


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
    return f"{_ADMISSION_NS}{suffix}", f"{_NO_ADMISSION_NS}{suffix}"


def _configuration_name(run: session.Run) -> str:
    """The experiment's webhook registration, named after its namespace: on a cluster other
    webhooks under test share (a user's, where every bed is that cluster) it neither
    replaces theirs nor is removed with them."""
    suffix = run.namespace.removeprefix(run.settings.namespace)
    return f"{registration.DEFAULT_CONFIGURATION_NAME}{suffix}"


def _leader_zone(run: session.Run) -> tuple[str, str, str]:
    """(zone, acting replica, its node) of the run's in-cluster controller now."""
    return node.leader_zone(_replicas(run), run.cluster.nodes_by_zone())


def _placed(run: session.Run, replicas: int, zone: str) -> in_cluster.Patch:
    """A patch of the in-cluster webhook's Deployment: ``replicas`` (0: its own) and every
    replica in ``zone`` (``controller-leader``: the zone of the controller's leader now)."""
    pinned = _leader_zone(run)[0] if zone == node.LEADER_ZONE else zone

    def patch(objects: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
        for obj in objects:
            if obj["kind"] == "Deployment":
                obj["spec"]["replicas"] = replicas or obj["spec"].get("replicas", 1)
                if pinned:
                    obj["spec"]["template"]["spec"]["nodeSelector"] = {ZONE_LABEL: pinned}
        return list(objects)
    return patch


def deploy_webhook(replicas: int = 0, zone: str = "",
                   configuration: Configuration = None) -> str:
    """Serve (unless it runs at a URL) and register the HA-config webhook under test
    (configuration ``zoneproof_components``; failurePolicy Fail), plus a selected and an
    unselected namespace for admission attempts; the webhook's URL ('' for a Service). An
    in-cluster webhook runs ``replicas`` pods (0: as many as its manifests say), all in
    ``zone`` when given (``controller-leader``: the zone of the controller's leader, deploy
    the controller first: a deliberately fragile placement)."""
    run = session.current(configuration)
    inside = run.settings.components.webhook.mode == IN_CLUSTER
    if (replicas or zone) and not inside:
        raise errors.ConfigError(f"replicas={replicas} and zone={zone!r} place an in-cluster "
                                 "webhook's pods: run with --zp-components in-cluster, or drop them")
    if replicas < 0:
        raise errors.ConfigError(f"replicas must be >= 0 (0: the manifests'), got {replicas}")
    hook = webhooks.RunningWebhook(run.cluster, run.settings.components.webhook,
                                   run.workdir / "webhook",
                                   configuration_name=_configuration_name(run),
                                   patch=_placed(run, replicas, zone) if inside else None)
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
        kube.delete_namespace(core, name)
    return names


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


def start_admission_traffic(interval_s: float = 0.5, configuration: Configuration = None) -> str:
    """Dry-run creates and updates of a selected Deployment (deploy the webhook first), one
    every ``interval_s`` in turn, each recorded (admitted or not, and how long it took)
    until ``stop_admission_traffic`` or the run's end; the namespace."""
    if interval_s <= 0:
        raise errors.ConfigError(f"interval_s must be > 0, got {interval_s}")
    run = session.current(configuration)
    run.extra(_WEBHOOK)
    selected, _ = _admission_namespaces(run)
    run.extras[_ADMISSIONS] = admission.AdmissionTraffic(
        run.api, run.timeline, namespace=selected, interval_s=interval_s).start()
    return selected


def stop_admission_traffic(configuration: Configuration = None) -> dict[str, Any]:
    """Stop the admission traffic; how many were admitted and failed, in all and during each
    outage of nodes (all along, and once its nodes were NotReady: the components-zone-admissions
    SLO's figure; with the p99 of the seconds an admission took)."""
    run = session.current(configuration)
    traffic = run.extras.pop(_ADMISSIONS, None)
    if not isinstance(traffic, admission.AdmissionTraffic):
        raise errors.FaultError("no admission traffic runs in this run: call "
                                "start_admission_traffic first")
    traffic.stop()
    outages = [{"fault": r.kind, "targets": list(r.targets),
                "failed": metrics.failed_admissions_during(run.timeline, r),
                "failed_once_detected": metrics.failed_admissions_after_detection(run.timeline, r),
                "latency_p99_s": metrics.admission_latency_p99(run.timeline, r)}
               for r in run.injector.records if r.causes(Effect.NODES_NOT_READY)]
    return {"admitted": traffic.admitted, "failed": traffic.failed, "during_outages": outages}


def expect_leader_zone_components(configuration: Configuration = None) -> dict[str, Any]:
    """The zone the in-cluster controller's Lease holder runs in, which must also run a
    replica of the in-cluster webhook (else a zone outage there proves nothing about
    admissions): zone, holder, its node, and the webhook's pods there. FaultError when
    the holder runs on no zone's node or no webhook replica runs in its zone."""
    run = session.current(configuration)
    zone, holder, where = _leader_zone(run)
    hook: webhooks.RunningWebhook = run.extra(_WEBHOOK)
    nodes = set(run.cluster.nodes_by_zone()[zone])
    pods = hook.pod_nodes()
    there = {pod: n for pod, n in pods.items() if n in nodes}
    if not there:
        raise errors.FaultError(f"no webhook replica runs in zone {zone} of the controller's "
                                f"leader {holder} ({where}); they run on {pods}: give the "
                                "webhook a replica per zone (deploy_webhook replicas)")
    run.timeline.add("leader_zone", zone, holder=holder, node=where,
                     webhook_pods=",".join(sorted(there)))
    return {"zone": zone, "holder": holder, "node": where, "webhook_pods_in_zone": there,
            "webhook_pods": pods}


# -- a workload the webhook makes zone tolerant -----------------------------------------

def _tolerant_namespace(run: session.Run) -> str:
    return f"{_TOLERANT_NS}{run.namespace.removeprefix(run.settings.namespace)}"


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


class _DeleteNamespace:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api, self.namespace = api, namespace

    def stop(self) -> None:
        try:
            client.CoreV1Api(self.api).delete_namespace(self.namespace)
        except client.ApiException as exc:
            if exc.status != 404:
                raise


class _SaveHistory:
    """Stops the run's register traffic (also when the run closes on failure) and saves its
    history next to the timeline."""

    def __init__(self, run: session.Run, traffic: RegisterTraffic) -> None:
        self.run, self.traffic = run, traffic

    def stop(self) -> None:
        history = self.traffic.stop()
        artefacts.save_history(self.run.workdir, history)
        self.run.history = history


class _StopReplicas:
    def __init__(self, group: controllers.ControllerReplicas) -> None:
        self.group = group

    def stop(self) -> None:
        self.group.stop_all()
