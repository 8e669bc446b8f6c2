"""chaostoolkit probes: read-only checks for steady-state hypotheses and the method.

No ``from __future__ import annotations`` here: chaostoolkit discovery reads real types.
"""



import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube
from zoneproof.chaos import k8s, session
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability
from zoneproof.traffic import workloads

__all__ = [
    "apiserver_ready",
    "controller_leader",
    "etcd_healthy",
    "nodes_ready",
    "workloads_running",
    "write_succeeds",
]

def nodes_ready(zone: str = "") -> bool:
    """True if every node (of ``zone`` when given) is Ready."""
    cluster = session.current().cluster
    by_zone = cluster.nodes_by_zone()
    if zone and zone not in by_zone:
        raise errors.ConfigError(f"unknown zone {zone!r}: the cluster has {sorted(by_zone)}")
    wanted = set(by_zone[zone]) if zone else {n for names in by_zone.values() for n in names}
    ready = cluster.status().nodes_ready
    return bool(wanted) and all(ready.get(n, False) for n in wanted)


def apiserver_ready() -> bool:
    """True if kube-apiserver's /readyz answers 200."""
    return session.current().cluster.apiserver_ready()


def etcd_healthy() -> bool:
    """True if every etcd member reports health (True where etcd is not reachable: existing)."""
    cluster = session.current().cluster
    if Capability.ETCD_MEMBERS not in cluster.capabilities:
        return True
    etcd = facets.facet(cluster, Capability.ETCD_MEMBERS)
    return all(etcd.etcd_member_healthy(m) for m in etcd.etcd_members())


def write_succeeds(timeout_s: float = 3.0) -> bool:
    """True if the API server acknowledges a write (a dry-run ConfigMap) within ``timeout_s``."""
    run = session.current()
    core = client.CoreV1Api(kube.api_client(run.cluster.kubeconfig, retries=0))
    try:
        core.create_namespaced_config_map("default", {"metadata": {"generateName": "zp-probe-"}},
                                          dry_run="All", _request_timeout=timeout_s)
    except (client.ApiException, urllib3.exceptions.HTTPError, OSError):
        return False
    return True


def workloads_running(replicas: int = 3) -> bool:
    """True if each workload has ``replicas`` Running pods and none is terminating
    (chaostoolkit-kubernetes' phase check, without its count-terminating-as-Running flaw)."""
    run = session.current()
    core = client.CoreV1Api(run.api)
    return all(k8s.pods_running(run.cluster.kubeconfig, core, namespace=run.namespace,
                                label_selector=f"workload={w}", min_count=replicas)
               for w in workloads.WORKLOADS)


def controller_leader() -> str:
    """The controller Lease's holder ('' when free or absent)."""
    run = session.current()
    return kube.lease_holder(run.api, run.config.lease_namespace, run.config.lease_name)
