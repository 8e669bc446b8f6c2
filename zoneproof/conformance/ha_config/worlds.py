"""Worlds: the facts generated inputs are judged with, made real in the cluster the webhook reads.

A world is a namespace (labels, annotations) with its HPAs; with the cluster's Node count
and the webhook's settings it is a ``model.Facts``. Worlds are created in a batch and reused
by many inputs; they are edited in a batch (annotations changed, HPAs created, retargeted,
resized and deleted) and the Node count changed, between phases. After each batch a
barrier (``barrier``) waits until the webhook under test reflects every world; a world it
never reflects within the bound is reported (``Worlds.unreflected``) and no input is
judged in it. The facts are read back from the API server after each batch: the model
judges with what the cluster holds.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from kubernetes import client

from zoneproof.conformance.ha_config import barrier, live, model
from zoneproof.runs import sweep
from zoneproof.specs.ha_config import configuration
from zoneproof.specs.ha_config.facts import HpaInfo, NamespaceInfo

__all__ = ["Design", "Edit", "Worlds"]

_TIMEOUT_S = 30
"""How long a world may take to be reflected (a watch cache is fed within milliseconds)."""
_REQUEST_TIMEOUT_S = 30


@dataclass(frozen=True, slots=True)
class Design:
    """A world to create: the namespace's labels and annotations, its HPAs."""

    labels: dict[str, str]
    annotations: dict[str, str]
    hpas: tuple[HpaInfo, ...]


@dataclass(frozen=True, slots=True)
class Edit:
    """A change of one world: annotations set (None removes), HPAs created or replaced, HPAs deleted."""

    annotations: dict[str, str | None]
    put: tuple[HpaInfo, ...] = ()
    delete: tuple[str, ...] = ()


@dataclass(slots=True)
class _World:
    namespace: str
    facts: model.Facts
    sync_present: bool = False
    reflected: bool = True


class Worlds:
    """The worlds of one run in the cluster of ``api``; the webhook answers probes through ``post``."""

    def __init__(self, api: client.ApiClient, post: barrier.Post,
                 settings: configuration.TolerationDefaults, *, prefix: str = "hacg",
                 timeout_s: float = _TIMEOUT_S) -> None:
        self.api, self.post, self.settings, self.timeout_s = api, post, settings, timeout_s
        self.prefix = f"{prefix}-{uuid.uuid4().hex[:6]}"
        self._core = client.CoreV1Api(api)
        self._worlds: list[_World] = []
        self.unreflected: list[str] = []
        """Reports of the changes the webhook never reflected (each fails the run)."""

    # -- reading -------------------------------------------------------------------------
    def node_count(self) -> int:
        """The Node objects of the cluster (all count, §4 step 4)."""
        return len(self._core.list_node(_request_timeout=_REQUEST_TIMEOUT_S).items or [])

    def _read(self, namespace: str, nodes: int) -> model.Facts:
        meta = self._core.read_namespace(namespace, _request_timeout=_REQUEST_TIMEOUT_S).metadata
        listed = client.AutoscalingV2Api(self.api).list_namespaced_horizontal_pod_autoscaler(
            namespace, _request_timeout=_REQUEST_TIMEOUT_S).items or []
        hpas = tuple(HpaInfo(h.metadata.name, h.spec.scale_target_ref.api_version or "",
                                   h.spec.scale_target_ref.kind, h.spec.scale_target_ref.name,
                                   h.spec.max_replicas) for h in listed)
        info = NamespaceInfo(namespace, dict(meta.labels or {}), dict(meta.annotations or {}))
        return model.Facts(info, hpas, nodes, self.settings)

    def refresh(self) -> None:
        """Read every world's facts again (after a change made elsewhere, e.g. the Node count
        set while the webhook was stopped)."""
        nodes = self.node_count()
        for world in self._worlds:
            world.facts = self._read(world.namespace, nodes)

    def facts(self) -> list[model.Facts]:
        """The facts of every world the webhook reflects (inputs are judged only there)."""
        return [w.facts for w in self._worlds if w.reflected]

    def current(self) -> list[model.Facts]:
        """The facts of every world, in creation order (``edit`` takes an edit per world)."""
        return [w.facts for w in self._worlds]

    @property
    def namespaces(self) -> list[str]:
        """Every world's namespace."""
        return [w.namespace for w in self._worlds]

    # -- changing ------------------------------------------------------------------------
    def _await(self, pending: Sequence[barrier.Pending]) -> None:
        left = barrier.wait(pending, self.post, timeout_s=self.timeout_s)
        for change in left:
            self.unreflected.append(change.report(self.timeout_s))
            for world in self._worlds:
                if world.namespace == change.namespace:
                    world.reflected = False

    def _toggle_sync(self, world: _World) -> barrier.Pending:
        hpas = live.Objects(self.api, "HorizontalPodAutoscaler", world.namespace)
        if world.sync_present:
            hpas.delete(barrier.SYNC_NAME)
        else:
            hpas.create(live.hpa_body(barrier.SYNC_HPA))
        world.sync_present = not world.sync_present
        return barrier.hpas_changed(world.namespace, world.sync_present)

    def _put_hpa(self, namespace: str, hpa: HpaInfo) -> None:
        hpas = live.Objects(self.api, "HorizontalPodAutoscaler", namespace)
        reply = hpas.create(live.hpa_body(hpa))
        if reply.status == 409:
            current = hpas.read(hpa.name)
            body = live.hpa_body(hpa)
            meta = current.get("metadata")
            version = meta.get("resourceVersion") if isinstance(meta, dict) else None
            body["metadata"] = {"name": hpa.name, "resourceVersion": version}
            reply = hpas.replace(hpa.name, body)
        if reply.refusal is not None:
            self.unreflected.append(f"namespace {namespace}: HPA {hpa.name} refused by the API server: "
                                    f"{reply.refusal}")

    def create(self, designs: Sequence[Design]) -> None:
        """Create a world per design; wait until the webhook reflects them."""
        made = []
        for design in designs:
            namespace = f"{self.prefix}-{len(self._worlds)}"
            self._core.create_namespace(sweep.labelled({"metadata": {
                "name": namespace, "labels": dict(design.labels), "annotations": dict(design.annotations)}}),
                _request_timeout=_REQUEST_TIMEOUT_S)
            world = _World(namespace, model.Facts(None, settings=self.settings))
            self._worlds.append(world)
            made.append((world, design))
        self._await([barrier.created(w.namespace) for w, _ in made])
        pending = []
        for world, design in made:
            for hpa in design.hpas:
                self._put_hpa(world.namespace, hpa)
            if design.hpas:
                pending.append(self._toggle_sync(world))
        self._await(pending)
        self.refresh()

    def edit(self, edits: Sequence[Edit]) -> None:
        """Change the worlds (edit ``i`` to world ``i``); wait until the webhook reflects them."""
        pending = []
        for world, change in zip(self._worlds, edits, strict=False):
            if not world.reflected or world.facts.namespace is None:
                continue
            old, namespace = world.facts, world.facts.namespace
            merged = {k: v for k, v in {**namespace.annotations, **change.annotations}.items()
                      if v is not None}
            new = dataclasses.replace(old, namespace=dataclasses.replace(namespace, annotations=merged))
            pending.append(barrier.facts_changed(world.namespace, old, new, self.post,
                                                 what=f"annotations {change.annotations}"))
            self._core.patch_namespace(world.namespace, {"metadata": {"annotations": change.annotations}},
                                       _request_timeout=_REQUEST_TIMEOUT_S)
            for hpa in change.put:
                self._put_hpa(world.namespace, hpa)
            for name in change.delete:
                live.Objects(self.api, "HorizontalPodAutoscaler", world.namespace).delete(name)
            if change.put or change.delete:
                pending.append(self._toggle_sync(world))
        self._await(pending)
        self.refresh()

    def set_nodes(self, nodes: live.NodeSet, count: int) -> None:
        """Make ``count`` Nodes exist; wait until the webhook reflects it in every world."""
        pending = []
        for world in self._worlds:
            if world.reflected:
                new = dataclasses.replace(world.facts, nodes=count)
                pending.append(barrier.facts_changed(world.namespace, world.facts, new, self.post,
                                                     what=f"{count} Node(s)"))
        nodes.set_count(count)
        self._await(pending)
        self.refresh()

    def delete(self) -> None:
        """Delete every world's namespace (without waiting)."""
        for namespace in self.namespaces:
            live.delete_namespace(self.api, namespace)
