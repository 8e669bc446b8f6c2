"""Components under test as in-cluster workloads: an image archive loaded, manifests applied.

How a component whose source deploys it as workloads (``source.Workloads``: the in-cluster
source's kustomize manifests and image archive) is started: the archive its source
renders (the reference's: ``zoneproof build --images``, cached) is loaded into every
node of a cluster that can (``Capability.LOAD_IMAGES``: kind), every rendered object is
labelled with the run and applied, and the workloads roll out. Cluster-scoped objects
(Namespace, RBAC, the webhook registration) carry the run's label and the run holds the
cluster (``sweep.track``), so a run killed or interrupted still removes them;
``uninstall`` removes everything at once otherwise. ``Installed.describe`` says what ran:
the manifests, the archive's SHA-256, the image ids it holds and the image id each pod runs.
"""

from __future__ import annotations

import datetime
import json
import tarfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.binaries import sha256_of
from zoneproof.cluster import registry
from zoneproof.cluster.interface import Capability, Cluster, Images
from zoneproof.components import manifests
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.source import Where, Workloads
from zoneproof.runs import sweep

__all__ = ["ROLLOUT_TIMEOUT_S", "Installed", "Patch", "archive_images", "install", "pod_nodes",
           "refusal", "restart", "uninstall"]

ROLLOUT_TIMEOUT_S = 300.0
_GONE_TIMEOUT_S = 120.0
_WORKLOADS = ("Deployment", "StatefulSet")
_loaded: set[tuple[str, str]] = set()
_lock = threading.Lock()


def refusal(cluster: Cluster) -> str | None:
    """Why in-cluster components cannot run on ``cluster`` (None: they can)."""
    if Capability.LOAD_IMAGES in cluster.capabilities and isinstance(cluster, Images):
        return None
    loaders = " or ".join(registry.backends_with(Capability.LOAD_IMAGES)) or "kind"
    return (f"in-cluster components need a cluster that loads image archives into its nodes; "
            f"cluster {cluster.name!r} of the {cluster.backend} backend cannot (it runs no pods "
            f"from them): use --zp-backend {loaders}, or --zp-components {Where.HOST}")


def archive_images(archive: Path) -> tuple[tuple[str, str], ...]:
    """(name, image id ``sha256:...``) of every tagged image in a ``docker save``/OCI archive."""
    try:
        with tarfile.open(archive) as tar:
            member = tar.extractfile("manifest.json")
            entries = json.load(member) if member is not None else []
    except (tarfile.TarError, KeyError, json.JSONDecodeError) as exc:
        raise errors.ConfigError(f"image archive {archive} has no readable manifest.json "
                                 f"({exc}): give the archive `docker save` wrote") from None
    found = []
    for entry in entries:
        config = Path(str(entry.get("Config", ""))).name.removesuffix(".json")
        found += [(str(tag), f"sha256:{config}") for tag in entry.get("RepoTags") or []]
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class Installed:
    """An in-cluster component as deployed: what was loaded and applied, and what runs."""

    component: Component
    origin: Mapping[str, str]
    """What its source says of it (``Workloads.describe``: its manifests)."""
    kubeconfig: Path
    image_archive: Path
    archive_sha256: str
    images: tuple[tuple[str, str], ...]
    """(name, image id) of the images in the archive."""
    rendered: manifests.Rendered
    created_namespaces: tuple[str, ...]
    running: tuple[tuple[str, str], ...]
    """(pod, image id it runs) of every workload's pod after the rollout."""
    load_s: float
    rollout_s: float

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return self.rendered.of_kind(kind)

    def describe(self) -> dict[str, Any]:
        """What ran (for reports) and enough for ``uninstall`` in another process."""
        return {"mode": str(self.component.where), "kubeconfig": str(self.kubeconfig),
                **self.origin, "image_archive": str(self.image_archive),
                "archive_sha256": self.archive_sha256,
                "images": [{"name": n, "id": i} for n, i in self.images],
                "running": [{"pod": p, "image_id": i} for p, i in self.running],
                "load_seconds": round(self.load_s, 3), "rollout_seconds": round(self.rollout_s, 3),
                "objects": [_ref(o) for o in self.rendered.objects],
                "created_namespaces": list(self.created_namespaces)}


def _ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {"name": obj["metadata"]["name"]}
    if namespace := obj["metadata"].get("namespace"):
        metadata["namespace"] = namespace
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": metadata}


def _load(cluster: Cluster, archive: Path, digest: str) -> float:
    """Load ``archive`` into ``cluster`` once per process; the seconds it took (0: loaded)."""
    key = (str(cluster.kubeconfig.resolve()), digest)
    with _lock:
        if key in _loaded:
            return 0.0
        assert isinstance(cluster, Images)
        started = time.monotonic()
        cluster.load_image_archive(archive)
        _loaded.add(key)
        return time.monotonic() - started


def _ensure_namespaces(core: client.CoreV1Api, objects: tuple[dict[str, Any], ...]) -> list[str]:
    """Create (labelled) the namespaces the objects live in that neither exist nor are among
    them; the ones created."""
    own = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    wanted = sorted({ns for o in objects if (ns := o["metadata"].get("namespace"))} - own)
    created = []
    for name in wanted:
        if kube.namespace_gone(core, name)[1] == "Terminating":
            _wait_gone(core, name)  # an earlier install's, still going: it would refuse ours
        try:
            core.create_namespace(sweep.labelled({"metadata": {"name": name}}))
            created.append(name)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
    return created


def _rolled_out(api: client.ApiClient, obj: Mapping[str, Any]) -> tuple[bool, str]:
    apps = client.AppsV1Api(api)
    name, namespace = obj["metadata"]["name"], obj["metadata"]["namespace"]
    read = (apps.read_namespaced_deployment if obj["kind"] == "Deployment"
            else apps.read_namespaced_stateful_set)
    found = read(name, namespace)
    wanted, ready = found.spec.replicas or 0, found.status.ready_replicas or 0
    return (ready == wanted and (found.status.updated_replicas or 0) == wanted,
            f"{obj['kind']} {namespace}/{name}: {ready}/{wanted} ready")


def _pods(core: client.CoreV1Api, workload: Mapping[str, Any]) -> list[Any]:
    """The pods of a Deployment or StatefulSet (by its selector's matchLabels)."""
    labels = workload["spec"]["selector"].get("matchLabels") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return list(core.list_namespaced_pod(workload["metadata"]["namespace"],
                                         label_selector=selector).items)


def pod_nodes(api: client.ApiClient, workload: Mapping[str, Any]) -> dict[str, str]:
    """Pod name → node ('' while unscheduled) of the workload's pods not being deleted."""
    return {p.metadata.name: p.spec.node_name or "" for p in _pods(client.CoreV1Api(api), workload)
            if p.metadata.deletion_timestamp is None}


def restart(api: client.ApiClient, deployment: Mapping[str, Any], *,
            timeout_s: float = ROLLOUT_TIMEOUT_S) -> tuple[list[str], list[str]]:
    """Replace a Deployment's pods by a rolling update, as ``kubectl rollout restart`` does,
    and wait until it rolled out and every old pod is gone (its shutdown ended); the pods
    (before, after). FaultError when any pod of before is still listed after."""
    apps = client.AppsV1Api(api)
    name, namespace = deployment["metadata"]["name"], deployment["metadata"]["namespace"]
    core = client.CoreV1Api(api)
    before = sorted(p.metadata.name for p in _pods(core, deployment))
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    generation = apps.patch_namespaced_deployment(name, namespace, {"spec": {"template": {"metadata": {
        "annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}).metadata.generation

    def replaced() -> tuple[bool, str]:
        found = apps.read_namespaced_deployment(name, namespace)
        status, wanted = found.status, found.spec.replicas or 0
        listed = {p.metadata.name for p in _pods(core, deployment)}
        done = ((status.observed_generation or 0) >= generation
                and (status.updated_replicas or 0) == wanted == (status.ready_replicas or 0)
                and (status.replicas or 0) == wanted and not listed & set(before))
        return done, (f"Deployment {namespace}/{name}: {status.updated_replicas}/{wanted} updated, "
                      f"{status.ready_replicas} ready, old pods left {sorted(listed & set(before))}")

    waiting.wait_for(replaced, what=f"Deployment {namespace}/{name} restarted", timeout_s=timeout_s,
                     interval_s=0.5)
    after = sorted(p.metadata.name for p in _pods(core, deployment))
    if set(after) & set(before) or not after:
        raise errors.FaultError(f"Deployment {namespace}/{name} was not restarted: pods {before} "
                                f"before, {after} after")
    return before, after


def _running(core: client.CoreV1Api, workloads: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for obj in workloads:
        for pod in _pods(core, obj):
            for status in pod.status.container_statuses or []:
                found.append((f"{pod.metadata.namespace}/{pod.metadata.name}", status.image_id))
    return sorted(found)


Patch = Callable[[tuple[dict[str, Any], ...]], Iterable[dict[str, Any]]]


def install(cluster: Cluster, component: Component, workloads: Workloads, *,
            patch: Patch | None = None) -> Installed:
    """Load the images of the component's ``workloads``, apply them, wait until every
    workload rolled out.

    ``patch(objects)`` may change the rendered objects before they are applied (e.g. what the
    suite tells the controller). ConfigError names the fix when ``cluster`` cannot load images.
    """
    if (reason := refusal(cluster)) is not None:
        raise errors.ConfigError(reason)
    component.validate()
    archive, rendered = workloads.render(component.kind)
    digest = sha256_of(archive)
    load_s = _load(cluster, archive, digest)
    objects = tuple(sweep.labelled(o) for o in rendered.objects)
    if patch is not None:
        objects = tuple(patch(objects))
    rendered = manifests.Rendered(objects, rendered.tls)
    api = kube.api_client(cluster.kubeconfig)
    core = client.CoreV1Api(api)
    sweep.track(cluster.kubeconfig)
    started = time.monotonic()
    created = _ensure_namespaces(core, objects)
    rolling = [o for o in objects if o["kind"] in _WORKLOADS]
    try:
        manifests.apply(rendered, cluster.kubeconfig)
        for obj in rolling:
            def probe(o: dict[str, Any] = obj) -> tuple[bool, str]:
                return _rolled_out(api, o)

            waiting.wait_for(probe, what=f"{component.label()} rolled out",
                             timeout_s=ROLLOUT_TIMEOUT_S, interval_s=1.0)
    except BaseException:
        _remove(cluster.kubeconfig, [_ref(o) for o in objects], created)
        raise
    return Installed(component, workloads.describe(), cluster.kubeconfig, archive, digest,
                     archive_images(archive), rendered, tuple(created),
                     tuple(_running(core, rolling)), load_s, time.monotonic() - started)


def _remove(kubeconfig: Path, refs: list[dict[str, Any]], namespaces: list[str]) -> None:
    """Delete the objects, then the namespaces made for them, waiting until they are gone
    (a namespace still terminating refuses the next install's objects)."""
    if not kubeconfig.is_file():
        return  # the cluster is gone, and what was in it
    manifests.delete(manifests.Rendered(tuple(refs), None), kubeconfig)
    core = client.CoreV1Api(kube.api_client(kubeconfig))
    for name in namespaces:  # all deletions first: the namespaces terminate side by side
        kube.delete_namespace(core, name)
    for name in namespaces:
        _wait_gone(core, name)


def _wait_gone(core: client.CoreV1Api, name: str) -> None:
    waiting.wait_for(lambda: kube.namespace_gone(core, name), what=f"namespace {name} deleted",
                     timeout_s=_GONE_TIMEOUT_S, interval_s=0.5)


def uninstall(description: Mapping[str, Any]) -> None:
    """Remove what ``Installed.describe`` lists (idempotent): objects, then namespaces made."""
    _remove(Path(description["kubeconfig"]), list(description["objects"]),
            list(description["created_namespaces"]))
