"""The HA-config webhook under test: served and registered, removed, and admissions
through it, also while its zone is down."""

from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.chaos import experiment, session
from zoneproof.components.harness import in_cluster
from zoneproof.components.harness import webhook as webhooks
from zoneproof.components.harness.source import IN_CLUSTER
from zoneproof.faults import Effect, node
from zoneproof.slo import metrics
from zoneproof.specs.ha_config import registration
from zoneproof.specs.kubernetes import ZONE_LABEL
from zoneproof.traffic import admission

__all__ = ["deploy_webhook", "expect_admissions", "expect_leader_zone_components",
           "remove_webhook", "restart_webhook", "start_admission_traffic", "stop_admission_traffic"]


def _admission_namespaces(run: experiment.ExperimentRun) -> tuple[str, str]:
    return experiment.named(run, "zp-admission"), experiment.named(run, "zp-no-admission")


def _configuration_name(run: experiment.ExperimentRun) -> str:
    """The experiment's webhook registration, named after its namespace: on a cluster other
    webhooks under test share (a user's, where every bed is that cluster) it neither
    replaces theirs nor is removed with them."""
    return experiment.named(run, registration.DEFAULT_CONFIGURATION_NAME)


def _leader_zone(run: experiment.ExperimentRun) -> tuple[str, str, str]:
    """(zone, acting replica, its node) of the run's in-cluster controller now."""
    return node.leader_zone(run.controller.get(), run.cluster.nodes_by_zone())


def _placed(run: experiment.ExperimentRun, replicas: int, zone: str,
            args: tuple[str, ...]) -> in_cluster.Patch:
    """A patch of the in-cluster webhook's Deployment: ``replicas`` (0: its own), every
    replica in ``zone`` (``controller-leader``: the zone of the controller's leader now),
    ``args`` added to each container's."""
    pinned = _leader_zone(run)[0] if zone == node.LEADER_ZONE else zone

    def patch(objects: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
        for obj in objects:
            if obj["kind"] == "Deployment":
                obj["spec"]["replicas"] = replicas or obj["spec"].get("replicas", 1)
                if pinned:
                    obj["spec"]["template"]["spec"]["nodeSelector"] = {ZONE_LABEL: pinned}
                for container in obj["spec"]["template"]["spec"]["containers"]:
                    container["args"] = [*container.get("args", []), *args]
        return list(objects)
    return patch


def deploy_webhook(replicas: int = 0, zone: str = "", args: list[str] | None = None) -> str:
    """Serve (unless it runs at a URL) and register the HA-config webhook under test
    (configuration ``zoneproof_components``; failurePolicy Fail), plus a selected and an
    unselected namespace for admission attempts; the webhook's URL ('' for a Service). An
    in-cluster webhook runs ``replicas`` pods (0: as many as its manifests say), all in
    ``zone`` when given (``controller-leader``: the zone of the controller's leader, deploy
    the controller first: a deliberately fragile placement). ``args`` are added to its
    command line (a self-check breaks the reference with them, e.g. --shutdown-delay=0)."""
    run = session.current()
    inside = run.config.components.webhook.mode == IN_CLUSTER
    if (replicas or zone) and not inside:
        raise errors.ConfigError(f"replicas={replicas} and zone={zone!r} place an in-cluster "
                                 "webhook's pods: run with --zp-components in-cluster, or drop them")
    if replicas < 0:
        raise errors.ConfigError(f"replicas must be >= 0 (0: the manifests'), got {replicas}")
    hook = run.webhook.start(webhooks.RunningWebhook(
        run.cluster, run.config.components.webhook, run.workdir / "webhook",
        configuration_name=_configuration_name(run), extra_args=() if inside else tuple(args or ()),
        patch=_placed(run, replicas, zone, tuple(args or ())) if inside else None))
    hook.start()
    selected, unselected = _admission_namespaces(run)
    admission.prepare(run.api, selected=selected, unselected=unselected)
    return hook.url


def remove_webhook() -> list[str]:
    """Unregister and stop the webhook; delete the admission namespaces (their names)."""
    run = session.current()
    run.webhook.stop()
    names = list(_admission_namespaces(run))
    core = client.CoreV1Api(run.api)
    for name in names:
        kube.delete_namespace(core, name)
    return names


def expect_admissions(selected_allowed: bool = True, timeout_s: float = 20.0) -> dict[str, bool]:
    """Wait until dry-run creates and updates of a selected Deployment are admitted
    (``selected_allowed``) or rejected, while those of an unselected one are admitted."""
    run = session.current()
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


def start_admission_traffic(interval_s: float = 0.5, streams: int = 1) -> str:
    """Dry-run creates and updates of a selected Deployment (deploy the webhook first), one
    every ``interval_s`` in turn in each of ``streams`` at once, each recorded (admitted or
    not, and how long it took) until ``stop_admission_traffic`` or the run's end; the
    namespace."""
    if interval_s <= 0:
        raise errors.ConfigError(f"interval_s must be > 0, got {interval_s}")
    if streams < 1:
        raise errors.ConfigError(f"streams must be >= 1, got {streams}")
    run = session.current()
    run.webhook.get()
    selected, _ = _admission_namespaces(run)
    run.admissions.start(admission.AdmissionTraffic(
        run.api, run.timeline, namespace=selected, interval_s=interval_s, streams=streams).start())
    return selected


def stop_admission_traffic() -> dict[str, Any]:
    """Stop the admission traffic; how many were admitted and failed, in all and during each
    outage of nodes (all along, and once its nodes were NotReady: the components-zone-admissions
    SLO's figure; with the p99 of the seconds an admission took)."""
    run = session.current()
    traffic = run.admissions.pop()
    traffic.stop()
    outages = [{"fault": r.kind, "targets": list(r.targets),
                "failed": metrics.failed_admissions_during(run.timeline, r),
                "failed_once_detected": metrics.failed_admissions_after_detection(run.timeline, r),
                "latency_p99_s": metrics.admission_latency_p99(run.timeline, r)}
               for r in run.injector.records if r.causes(Effect.NODES_NOT_READY)]
    return {"admitted": traffic.admitted, "failed": traffic.failed, "during_outages": outages}


def restart_webhook(rounds: int = 2, timeout_s: float = 180.0) -> list[dict[str, Any]]:
    """Restart the in-cluster webhook ``rounds`` times, each a rolling update of its
    Deployment (as ``kubectl rollout restart``) waited out until every old pod is gone, while
    the admission traffic (start it first) goes on; each round's pods before and after.
    FaultError when a round replaced no pod or no admission was attempted during it: then
    the rollout proved nothing about admissions."""
    if rounds < 1:
        raise errors.ConfigError(f"rounds must be >= 1, got {rounds}")
    run = session.current()
    hook = run.webhook.get()
    run.admissions.get()
    done = []
    for n in range(1, rounds + 1):
        began = run.timeline.add("webhook_restart", f"round {n}")
        pods = hook.rollout_restart(timeout_s)
        tried = sum(1 for e in run.timeline.select(after=began.t)
                    if e.kind in ("admission_ok", "admission_failed"))
        run.timeline.add("webhook_restarted", f"round {n}", attempts=str(tried),
                         pods=";".join(f"{' '.join(b)} -> {' '.join(a)}" for b, a in pods))
        if not tried:
            raise errors.FaultError(f"no admission was attempted during restart round {n}: "
                                    "start_admission_traffic before restart_webhook")
        done.append({"round": n, "admission_attempts": tried,
                     "pods": [{"before": b, "after": a} for b, a in pods]})
    return done


def expect_leader_zone_components() -> dict[str, Any]:
    """The zone the in-cluster controller's Lease holder runs in, which must also run a
    replica of the in-cluster webhook (else a zone outage there proves nothing about
    admissions): zone, holder, its node, and the webhook's pods there. FaultError when
    the holder runs on no zone's node or no webhook replica runs in its zone."""
    run = session.current()
    zone, holder, where = _leader_zone(run)
    hook = run.webhook.get()
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
