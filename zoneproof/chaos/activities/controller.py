"""The HA controller under test: its replicas started, stopped, and its leader waited for."""

from kubernetes import client

from zoneproof._util import waiting
from zoneproof.chaos import session
from zoneproof.components.harness import controller as controllers
from zoneproof.components.harness import in_cluster_controller

__all__ = ["deploy_ha_controller", "remove_ha_controller", "wait_controller_leader"]


def deploy_ha_controller(replicas: int = 2, require_leader: bool = True,
                         timeout_s: float = 30.0) -> str:
    """Start ``replicas`` replicas of the HA controller under test (configuration
    ``zoneproof_components``: host processes, or its in-cluster Deployment) acting in the
    run's namespace on a fresh Lease; the leader. Without ``require_leader`` a controller
    that never takes the Lease is let run (its deletes are then judged by the
    concurrent-actors SLO); returns ''."""
    run = session.current()
    s = run.config
    settings = controllers.ControllerSettings(
        namespaces=(run.namespace,), selector=s.selector, lease_name=s.lease_name,
        lease_namespace=s.lease_namespace, component=s.components.controller)
    try:  # a Lease left by an earlier run would credit its holder with this run's deletes
        client.CoordinationV1Api(run.api).delete_namespaced_lease(s.lease_name,
                                                                  s.lease_namespace)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    group = run.controller.start(in_cluster_controller.replicas_of(
        run.cluster, settings, run.workdir / "controller", replicas=replicas))
    group.start_all()
    run.replica_prefix = group.prefix  # who the audit log's deletes are attributed to
    try:
        return group.wait_leader(timeout_s)
    except waiting.WaitTimeout:
        if require_leader:
            raise
        run.timeline.add("no_leader", s.lease, component=settings.component.label())
        return ""


def remove_ha_controller() -> list[str]:
    """Stop every controller replica of this run; their identities."""
    group = session.current().controller.take()
    if group is None:
        return []
    group.stop_all()
    return group.identities


def wait_controller_leader(timeout_s: float = 30.0) -> str:
    """Wait until a live replica of this run holds the Lease; its identity."""
    group = session.current().controller.get()

    def probe() -> tuple[bool, str]:
        holder = group.holder()
        return bool(holder) and group.alive(holder), holder

    return waiting.wait_for(probe, what="a live controller replica to hold the Lease",
                            timeout_s=timeout_s, interval_s=0.1, ignore=(client.ApiException,))
