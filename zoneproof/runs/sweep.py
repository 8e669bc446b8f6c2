"""What a run creates in a cluster: labelled with the run's id, removed when the run ends.

Every object the suite creates outside a namespace of its own — namespaces, ClusterRoles
and their bindings, webhook registrations, CertificateSigningRequests, fake Nodes — carries
``zoneproof.dev/run=<run id>`` (``labels``); objects inside such namespaces go with them.
A run that acquires a cluster holds it (``track``): when the run is reaped every object of
those kinds with its label is deleted (``remove_labelled``), and each object it could not
label — the Lease the controller under test creates — by name (``track_named``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import kube, waiting
from zoneproof._util.progress import Progress

__all__ = [
    "KINDS",
    "RUN_LABEL",
    "hold_uncordon",
    "labelled",
    "labels",
    "reap_object",
    "reap_objects",
    "reap_uncordon",
    "remove_labelled",
    "remove_named",
    "track",
    "track_named",
    "uncordon",
]

log = logging.getLogger(__name__)

RUN_LABEL = "zoneproof.dev/run"
_GONE_TIMEOUT_S = 120.0
_SILENT_S = 10.0
"""How long the wait for a run's namespaces to go bears an API server that stopped
answering (a bed going down): then the sweep ends with the error naming what is left."""


def labels() -> dict[str, str]:
    """``{zoneproof.dev/run: <run id>}`` inside a run, else nothing."""
    run = runs.current()
    return {RUN_LABEL: run.id} if run is not None else {}


def labelled(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` (an object to create) with the run's label added to its metadata."""
    metadata = dict(body.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), **labels()}
    return {**body, "metadata": metadata}


def track(kubeconfig: Path) -> None:
    """The current run holds the cluster of ``kubeconfig``: its labelled objects go with it."""
    run = runs.current()
    if run is not None:
        path = str(kubeconfig.resolve())
        run.hold("objects", path, kubeconfig=path, run=run.id)


def track_named(kubeconfig: Path, kind: str, namespace: str, name: str) -> None:
    """The current run holds object ``kind`` ``namespace/name`` (one it cannot label)."""
    run = runs.current()
    if run is not None:
        path = str(kubeconfig.resolve())
        run.hold("object", f"{path}:{kind}:{namespace}/{name}", kubeconfig=path,
                 object={"kind": kind, "namespace": namespace, "name": name})


def hold_uncordon(kubeconfig: Path, label_selector: str) -> None:
    """The current run uncordons the nodes of ``label_selector`` when it ends (it is about
    to cordon them)."""
    run = runs.current()
    if run is not None:
        path = str(kubeconfig.resolve())
        run.hold("uncordon", f"{path}:{label_selector}", kubeconfig=path,
                 selector=label_selector)


@dataclass(frozen=True, slots=True)
class _Kind:
    name: str
    api: Callable[[client.ApiClient], Any]
    list: str
    delete: str


#: The cluster-scoped kinds the suite creates (namespaced objects live in its namespaces).
KINDS = (
    _Kind("MutatingWebhookConfiguration", client.AdmissionregistrationV1Api,
          "list_mutating_webhook_configuration", "delete_mutating_webhook_configuration"),
    _Kind("ValidatingWebhookConfiguration", client.AdmissionregistrationV1Api,
          "list_validating_webhook_configuration", "delete_validating_webhook_configuration"),
    _Kind("ClusterRoleBinding", client.RbacAuthorizationV1Api, "list_cluster_role_binding",
          "delete_cluster_role_binding"),
    _Kind("ClusterRole", client.RbacAuthorizationV1Api, "list_cluster_role",
          "delete_cluster_role"),
    _Kind("CertificateSigningRequest", client.CertificatesV1Api,
          "list_certificate_signing_request", "delete_certificate_signing_request"),
    _Kind("Node", client.CoreV1Api, "list_node", "delete_node"),
    _Kind("Namespace", client.CoreV1Api, "list_namespace", "delete_namespace"),
)


def _api(kubeconfig: Path) -> client.ApiClient | None:
    if not kubeconfig.is_file():  # a bed deleted with its state: nothing left to clean
        log.debug("kubeconfig %s is gone: its cluster went with it", kubeconfig)
        return None
    return kube.teardown_client(kubeconfig)


@contextlib.contextmanager
def _answered(kubeconfig: Path, doing: str, undo: str) -> Iterator[None]:
    """A request that got no answer (connection refused, timed out) as a BackendError naming
    the cluster, what was left undone and the kubectl command (``undo``) that does it."""
    try:
        yield
    except urllib3.exceptions.HTTPError as exc:
        raise errors.BackendError(
            f"the API server of the cluster of {kubeconfig} did not answer while {doing} "
            f"({type(exc).__name__}: {str(exc)[:200]}); once it answers: "
            f"kubectl --kubeconfig {kubeconfig} {undo}") from None


def remove_labelled(kubeconfig: Path, run_id: str, progress: Progress) -> list[str]:
    """Delete every object of ``KINDS`` labelled with run ``run_id``; wait until the
    namespaces are gone. Their ``Kind/name``s."""
    api = _api(kubeconfig)
    if api is None:
        return []
    selector = f"{RUN_LABEL}={run_id}"
    removed: list[str] = []
    with api, _answered(
            kubeconfig, f"removing the objects labelled {selector}",
            f"delete {','.join(k.name.lower() for k in KINDS)} -l {selector}"):
        for kind in KINDS:
            resource = kind.api(api)
            for item in getattr(resource, kind.list)(label_selector=selector).items:
                if item.metadata.deletion_timestamp is not None:
                    continue  # going already (deleting a terminating namespace is a conflict)
                _delete(getattr(resource, kind.delete), item.metadata.name,
                        going=kind.name == "Namespace")
                removed.append(f"{kind.name}/{item.metadata.name}")
        core = client.CoreV1Api(api)
        answered = time.monotonic()

        def namespaces_gone() -> tuple[bool, list[str]]:
            nonlocal answered
            try:
                items = core.list_namespace(label_selector=selector).items
            except urllib3.exceptions.HTTPError as exc:
                if time.monotonic() - answered > _SILENT_S:
                    raise
                return False, [f"no answer ({type(exc).__name__})"]
            answered = time.monotonic()
            left = [n.metadata.name for n in items]
            return not left, left

        waiting.wait_for(namespaces_gone, what=f"namespaces of run {run_id} deleted",
                         timeout_s=_GONE_TIMEOUT_S, interval_s=0.5)
    if removed:
        progress(f"run {run_id}: removed {len(removed)} object(s) from the cluster of "
                 f"{kubeconfig}: {', '.join(removed)}")
    return removed


def _delete(delete: Callable[..., Any], *args: str, going: bool = False) -> None:
    """Delete; gone already is fine, and with ``going`` so is 409 (a namespace that began
    terminating since it was listed: the API server refuses to delete it again)."""
    try:
        delete(*args)
    except client.ApiException as exc:
        if exc.status != 404 and not (going and exc.status == 409):
            raise


def remove_named(kubeconfig: Path, obj: dict[str, str], progress: Progress) -> None:
    """Delete object ``obj`` ({kind, namespace, name}; Lease only) if it exists."""
    if obj["kind"] != "Lease":
        raise ValueError(f"cannot remove a {obj['kind']} by name (only Leases)")
    api = _api(kubeconfig)
    if api is None:
        return
    with api, _answered(
            kubeconfig, f"removing Lease {obj['namespace']}/{obj['name']}",
            f"delete lease -n {obj['namespace']} {obj['name']}"):
        _delete(client.CoordinationV1Api(api).delete_namespaced_lease, obj["name"],
                obj["namespace"])
    progress(f"removed Lease {obj['namespace']}/{obj['name']} from the cluster of {kubeconfig}")


def uncordon(kubeconfig: Path, label_selector: str, progress: Progress) -> None:
    """Make the nodes of ``label_selector`` schedulable again."""
    api = _api(kubeconfig)
    if api is None:
        return
    with api, _answered(
            kubeconfig, f"uncordoning the nodes of {label_selector}",
            f"uncordon -l {label_selector}"):
        core = client.CoreV1Api(api)
        nodes = [n.metadata.name for n in core.list_node(label_selector=label_selector).items]
        for node in nodes:
            try:
                core.patch_node(node, {"spec": {"unschedulable": None}})
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
    progress(f"uncordoned {', '.join(nodes)} in the cluster of {kubeconfig}")


# -- how a run's objects are undone (reapers of holding kinds objects, object, uncordon) ---

def reap_objects(holding: dict[str, Any], progress: Progress) -> None:
    """Remove a run's labelled objects from a cluster (``track``)."""
    remove_labelled(Path(holding["kubeconfig"]), holding["run"], progress)


def reap_object(holding: dict[str, Any], progress: Progress) -> None:
    """Remove an object a run could not label (``track_named``)."""
    remove_named(Path(holding["kubeconfig"]), holding["object"], progress)


def reap_uncordon(holding: dict[str, Any], progress: Progress) -> None:
    """Uncordon the nodes a run cordoned (``hold_uncordon``)."""
    uncordon(Path(holding["kubeconfig"]), str(holding["selector"]), progress)
