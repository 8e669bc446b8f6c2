"""Workloads the HA controller protects: deployed, removed, waited for."""

from kubernetes import client

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.chaos import k8s, session
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability
from zoneproof.traffic import resolver, workloads

__all__ = ["deploy_resolver", "deploy_workloads", "expect_workloads_running",
           "remove_workloads", "wait_resolver", "wait_workloads_ready"]


def deploy_workloads(replicas: int = 3, pdb_max_unavailable: int = 0,
                     timeout_s: float = 90.0) -> dict[str, dict[str, str]]:
    """StatefulSet ``db`` and Deployment ``core`` (``replicas`` each, spread over zones) in
    the run's namespace, labelled for the HA controller; waits until all are Ready.
    Returns workload → {pod: node}."""
    if replicas < 1 or pdb_max_unavailable < 0:
        raise errors.ConfigError(f"replicas must be >= 1 and pdb_max_unavailable >= 0, got "
                                 f"{replicas} and {pdb_max_unavailable}")
    run = session.current()
    run.workloads.start(run.namespace)
    workloads.apply(run.api, namespace=run.namespace, selector=run.config.selector,
                    replicas=replicas, pdb_max_unavailable=pdb_max_unavailable)
    run.timeline.add("workloads_deployed", run.namespace, replicas=str(replicas),
                     pdb_max_unavailable=str(pdb_max_unavailable))
    return wait_workloads_ready(replicas=replicas, timeout_s=timeout_s)


def remove_workloads() -> str:
    """Delete the run's workload namespace (not waiting for it to go); its name."""
    run = session.current()
    run.workloads.take()
    run.delete_namespace(run.namespace)
    return run.namespace


def wait_workloads_ready(replicas: int = 3, avoid_zone: str = "",
                         avoid_faulted_nodes: bool = False,
                         timeout_s: float = 90.0) -> dict[str, dict[str, str]]:
    """Wait until ``replicas`` pods of each workload are Ready (none terminating), none on a
    node of ``avoid_zone`` nor (``avoid_faulted_nodes``) on a node a fault of this run
    turned NotReady; returns workload → {pod: node}."""
    run = session.current()
    core = client.CoreV1Api(run.api)
    avoided = set(run.cluster.nodes_by_zone().get(avoid_zone, [])) if avoid_zone else set()
    if avoid_faulted_nodes:
        avoided |= set(run.not_ready_targets())

    def probe() -> tuple[bool, dict[str, dict[str, str]]]:
        where = {w: workloads.ready_pods(core, run.namespace, w) for w in workloads.WORKLOADS}
        ok = all(len(pods) == replicas and not set(pods.values()) & avoided
                 for pods in where.values())
        return ok, where

    where = waiting.wait_for(probe, what=f"{replicas} Ready pods of each workload in "
                             f"{run.namespace}" + (f" off {sorted(avoided)}" if avoided else ""),
                             timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))
    run.timeline.add("workloads_ready", run.namespace, placement=repr(where))
    return where


def expect_workloads_running(replicas: int = 3, timeout_s: float = 30.0) -> bool:
    """Wait until each workload has ``replicas`` Running pods, none terminating
    (chaostoolkit-kubernetes' phase check, minus its count-terminating-as-Running flaw)."""
    run = session.current()
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


def deploy_resolver(replicas: int = 3, timeout_s: float = 60.0) -> dict[str, bool]:
    """Deployment ``resolver`` (``replicas`` pods spread over zones) in the run's namespace:
    each Ready only while its name lookups through the cluster DNS answer; waits until all
    are Ready. Returns pod → Ready."""
    if replicas < 1:
        raise errors.ConfigError(f"replicas must be >= 1, got {replicas}")
    run = session.current()
    image = facets.facet(run.cluster, Capability.CLUSTER_DNS).resolver_image()
    run.workloads.start(run.namespace)
    workloads.create_namespace(run.api, run.namespace)
    resolver.apply(run.api, run.namespace, replicas, image)
    run.timeline.add("resolver_deployed", run.namespace, replicas=str(replicas), image=image)
    try:
        return wait_resolver(ready=True, replicas=replicas, timeout_s=timeout_s)
    except waiting.WaitTimeout as exc:
        raise waiting.WaitTimeout(
            f"{exc}; the resolver pods run {image}, which must hold getent and be on the "
            "nodes or pullable by them (`kubectl describe pod -l "
            f"{resolver.SELECTOR} -n {run.namespace}` says which)") from None


def wait_resolver(ready: bool = True, replicas: int = 3,
                  timeout_s: float = 60.0) -> dict[str, bool]:
    """Wait until the ``replicas`` resolver pods all resolve names (``ready``) or none does;
    returns pod → Ready."""
    run = session.current()
    core = client.CoreV1Api(run.api)

    def probe() -> tuple[bool, dict[str, bool]]:
        pods = resolver.ready_pods(core, run.namespace)
        ok = len(pods) == replicas and all(r is ready for r in pods.values())
        return ok, pods

    state = "resolving names" if ready else "resolving no name"
    return waiting.wait_for(probe, what=f"{replicas} resolver pods {state} in {run.namespace}",
                            timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))
