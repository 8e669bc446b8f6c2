"""kubeadm's CoreDNS Deployment, taken down and given back through the API.

``take_down`` keeps the replicas it had on the Deployment itself (``REPLICAS_ANNOTATION``)
until ``restore`` puts them back, so whoever finds a cluster a run left with its DNS down
(the kind bed's keeper, the chaos suite's restore) repairs it from the cluster alone. A run
taking it down holds it (``hold``): a run killed mid-fault gives it back when reaped, on any
cluster (a user's too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import kube
from zoneproof._util.progress import Progress

__all__ = ["COREDNS", "HOLDING", "REPLICAS_ANNOTATION", "hold", "present", "read", "reap_held",
           "release", "restore", "take_down"]

#: The cluster DNS Deployment kubeadm (and so kind) installs: (namespace, name).
COREDNS = ("kube-system", "coredns")
#: On the CoreDNS Deployment while it is down: the replicas it had before.
REPLICAS_ANNOTATION = "zoneproof.dev/replicas-before-dns-outage"
#: The kind of run holding a cluster whose CoreDNS the run took down is.
HOLDING = "cluster-dns"


def present(api: client.ApiClient) -> bool:
    """Whether the cluster runs kubeadm's CoreDNS Deployment (and lets zoneproof read it)."""
    try:
        read(client.AppsV1Api(api), "look")
    except (errors.FaultError, client.ApiException):
        return False
    return True


def read(apps: client.AppsV1Api, what: str) -> client.V1Deployment:
    """The CoreDNS Deployment; FaultError naming ``what`` asked when the cluster has none."""
    namespace, name = COREDNS
    try:
        return apps.read_namespaced_deployment(name, namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            raise errors.FaultError(f"{what}: no cluster DNS Deployment {namespace}/{name} in "
                                    "this cluster (kubeadm's CoreDNS): nothing to take down") \
                from None
        raise


def _scale(apps: client.AppsV1Api, replicas: int, kept: str | None) -> None:
    namespace, name = COREDNS
    apps.patch_namespaced_deployment(name, namespace, {
        "metadata": {"annotations": {REPLICAS_ANNOTATION: kept}},
        "spec": {"replicas": replicas}})


def take_down(apps: client.AppsV1Api, deployment: client.V1Deployment) -> None:
    """Scale ``deployment`` (``read``'s) to 0, keeping the replicas it had (those kept by
    an earlier take-down not yet restored win)."""
    kept = (deployment.metadata.annotations or {}).get(REPLICAS_ANNOTATION)
    _scale(apps, 0, kept if kept is not None else str(deployment.spec.replicas or 0))


def restore(api: client.ApiClient) -> int | None:
    """Give CoreDNS back the replicas ``take_down`` kept (idempotent); the count put back,
    None when it was not down (or the cluster has no CoreDNS)."""
    apps = client.AppsV1Api(api)
    try:
        kept = (read(apps, "restore").metadata.annotations or {}).get(REPLICAS_ANNOTATION)
    except errors.FaultError:
        return None
    if kept is None:
        return None
    _scale(apps, int(kept), None)
    return int(kept)


def hold(kubeconfig: Path) -> None:
    """The current run is taking down the CoreDNS of ``kubeconfig``'s cluster: restored when
    the run is reaped unless ``release``d first."""
    runs.hold_cluster(HOLDING, kubeconfig)


def release(kubeconfig: Path) -> None:
    """The current run gave CoreDNS back (``restore``): nothing left to undo."""
    runs.release_cluster(HOLDING, kubeconfig)


def reap_held(holding: dict[str, Any], progress: Progress) -> None:
    """Give back the CoreDNS a dead run left down (its holding's cluster)."""
    kubeconfig = Path(holding["kubeconfig"])
    if not kubeconfig.is_file():  # a bed deleted with its state: nothing left to give back
        return
    with kube.teardown_client(kubeconfig) as api:
        if (replicas := restore(api)) is not None:
            progress(f"CoreDNS of the cluster of {kubeconfig} given back its {replicas} "
                     "replicas (a DNS outage was left in force)")
