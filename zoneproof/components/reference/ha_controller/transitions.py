"""Pure decisions: a node's Ready state, which transitions act, which pods to delete.

Objects may be raw API dicts (camelCase keys) or kubernetes-client models (snake_case
attributes); nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zoneproof.components.reference.ha_controller import selectors

__all__ = [
    "PodRef",
    "ReadyState",
    "is_fenced",
    "is_not_ready",
    "node_name",
    "node_zone",
    "pod_ref",
    "pods_to_delete",
    "ready_state",
    "resource_version",
    "triggers_action",
]


class ReadyState(enum.Enum):
    """The status of a node's ``Ready`` condition; MISSING when it has none."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"
    MISSING = "Missing"


@dataclass(frozen=True, slots=True)
class PodRef:
    """What the controller needs to know about a pod to decide on and delete it."""

    namespace: str
    name: str
    uid: str | None
    node_name: str | None
    labels: Mapping[str, str] = field(default_factory=dict, compare=False)
    terminating: bool = field(default=False, compare=False)
    """Deleted gracefully already (``metadata.deletionTimestamp`` set)."""


def _field(obj: Any, snake: str, camel: str | None = None) -> Any:
    """``obj[camel]`` for a dict, ``obj.snake`` for a model, None when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(camel or snake)
    return getattr(obj, snake, None)


def node_name(node: Any) -> str:
    """``metadata.name`` of a node (or any object)."""
    return str(_field(_field(node, "metadata"), "name"))


ZONE_LABEL = "topology.kubernetes.io/zone"


def node_zone(node: Any) -> str:
    """The node's zone label ('' when it has none)."""
    labels = _field(_field(node, "metadata"), "labels") or {}
    return str(labels.get(ZONE_LABEL, ""))


def resource_version(obj: Any) -> str | None:
    """``metadata.resourceVersion`` of an object or list, None when absent."""
    rv = _field(_field(obj, "metadata"), "resource_version", "resourceVersion")
    return None if rv is None else str(rv)


def ready_state(node: Any) -> ReadyState:
    """The node's Ready condition; any status other than True/False counts as UNKNOWN."""
    for condition in _field(_field(node, "status"), "conditions") or ():
        if _field(condition, "type") == "Ready":
            status = _field(condition, "status")
            if status in ("True", "False"):
                return ReadyState(status)
            return ReadyState.UNKNOWN
    return ReadyState.MISSING


def is_not_ready(state: ReadyState) -> bool:
    """NotReady for this controller: Ready is False or Unknown (MISSING is a new node)."""
    return state in (ReadyState.FALSE, ReadyState.UNKNOWN)


#: Taints kcm's node lifecycle controller puts on a NotReady/unreachable node.
NOT_READY_TAINTS = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})


def is_fenced(node: Any) -> bool:
    """Whether the scheduler can no longer place ordinary pods on ``node``.

    True once kcm has tainted it ``not-ready``/``unreachable`` with NoSchedule or
    NoExecute. Between a node's NotReady transition and this taint the scheduler may
    still bind a pod to it (e.g. one just force-deleted from another failed node).
    """
    return any(_field(t, "key") in NOT_READY_TAINTS
               and _field(t, "effect") in ("NoSchedule", "NoExecute")
               for t in _field(_field(node, "spec"), "taints") or ())


def triggers_action(
    before: ReadyState | None,
    after: ReadyState,
    *,
    on_unknown: bool = True,
    on_false: bool = True,
    on_recovery: bool = False,
    on_not_ready_change: bool = False,
) -> bool:
    """Whether ``before`` → ``after`` makes the controller force-delete pods.

    The reference (defaults) acts on True→False and True→Unknown only; ``before`` None
    (a node not seen before) never acts. ``on_unknown=False``, ``on_false=False``,
    ``on_recovery=True`` and ``on_not_ready_change=True`` are the broken variants' predicates.
    """
    if on_not_ready_change and before is not None and is_not_ready(before) and is_not_ready(after):
        return before is not after
    if before is ReadyState.TRUE:
        return ((on_false and after is ReadyState.FALSE)
                or (on_unknown and after is ReadyState.UNKNOWN))
    return on_recovery and before is not None and after is ReadyState.TRUE


def pod_ref(pod: Any) -> PodRef:
    """A PodRef from a pod dict or model."""
    meta = _field(pod, "metadata")
    return PodRef(
        namespace=str(_field(meta, "namespace")),
        name=str(_field(meta, "name")),
        uid=_field(meta, "uid"),
        node_name=_field(_field(pod, "spec"), "node_name", "nodeName"),
        labels=dict(_field(meta, "labels") or {}),
        terminating=_field(meta, "deletion_timestamp", "deletionTimestamp") is not None,
    )


def pods_to_delete(
    pods: Iterable[PodRef],
    *,
    node: str,
    selector: selectors.Selector | None,
    namespaces: frozenset[str] | None,
) -> list[PodRef]:
    """The pods to force-delete for ``node``, sorted by namespace and name.

    A pod qualifies when it is bound to ``node``, is in ``namespaces`` (None: any) and
    matches ``selector`` (None: any pod — only the ``ignores-selector`` variant passes
    None). Pods already terminating qualify: a graceful delete never finishes on a dead
    node, which is what the force delete is for.
    """
    chosen = {
        (p.namespace, p.name): p
        for p in pods
        if p.node_name == node
        and (namespaces is None or p.namespace in namespaces)
        and (selector is None or selector.matches(p.labels))
    }
    return [chosen[key] for key in sorted(chosen)]
