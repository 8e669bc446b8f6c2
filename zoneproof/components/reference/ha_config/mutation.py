"""The admission handler (spec §4): request + cluster facts → Admission. Pure apart from facts reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zoneproof.components.reference.ha_config import decoding, gostrconv, patches, rules
from zoneproof.components.reference.ha_config.variants import Behaviour
from zoneproof.specs.ha_config import facts, keys
from zoneproof.specs.ha_config.configuration import TolerationDefaults
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue, PatchOp

__all__ = ["NIL_POINTER_PANIC", "Request", "TolerationDefaults", "Admission", "admit"]

NIL_POINTER_PANIC = "panic: runtime error: invalid memory address or nil pointer dereference [recovered]"
_WORKLOADS = ("Deployment", "StatefulSet")


@dataclass(frozen=True, slots=True)
class Request:
    """The AdmissionRequest fields the handler uses; ``obj`` is None when absent."""

    uid: str
    group: str
    version: str
    kind: str
    namespace: str
    name: str
    operation: str
    obj: JsonValue = None
    old: JsonValue = None
    """``oldObject`` (UPDATE); the spec's handler never reads it."""


@dataclass(frozen=True, slots=True)
class Admission:
    """The AdmissionResponse content; ``mutated`` is the object after the patch."""

    allowed: bool
    code: int
    reason: str = ""
    message: str = ""
    patch: tuple[PatchOp, ...] = ()
    mutated: JsonObject | None = None


def _errored(message: str) -> Admission:
    return Admission(allowed=False, code=500, message=message)


def _denied(message: str, code: int = 403) -> Admission:
    return Admission(allowed=False, code=code, reason="Forbidden" if code == 403 else "BadRequest",
                   message=message)


@dataclass(frozen=True, slots=True)
class _Context:
    policy: rules.NamespacePolicy
    scaled: bool
    hpa_max: int
    multi_node: bool
    settings: TolerationDefaults
    behaviour: Behaviour
    namespace_annotations: Mapping[str, str]
    old_replicas: int | None
    """``oldObject``'s spec.replicas on UPDATE (only a broken behaviour reads it)."""


def admit(request: Request, cluster: facts.ClusterFacts, *, settings: TolerationDefaults | None = None,
          behaviour: Behaviour | None = None) -> Admission:
    """Handle one request exactly as §4 orders it (defaults: no tolerations, reference behaviour)."""
    settings = settings or TolerationDefaults()
    behaviour = (behaviour or Behaviour()).for_kind(request.kind)
    try:
        namespace = cluster.namespace(request.namespace)
    except facts.FactsError as exc:
        return _errored(str(exc))
    if behaviour.handler_checks_consider and namespace.labels.get(keys.LABEL_CONSIDER) != "true":
        return Admission(allowed=True, code=200)
    policy = rules.NamespacePolicy.from_annotations(namespace.annotations, behaviour,
                                                    namespace.labels)
    target = f"{request.group}/{request.version}" if request.group else request.version

    def targets(h: facts.HpaInfo) -> bool:
        version = h.target_api_version
        if not behaviour.hpa_exact_api_version and version.startswith(f"{request.group}/"):
            version = target
        return (version, h.target_kind, h.target_name) == (target, request.kind, request.name)

    try:
        match = next((h for h in cluster.hpas(request.namespace) if targets(h)), None)
    except facts.FactsError as exc:
        return _errored(f"failed to list all HPAs: {exc}")
    try:
        multi_node = cluster.node_count() > 1
    except facts.FactsError as exc:
        return _errored(f"failed to list nodes: {exc}")
    context = _Context(policy, match is not None, match.max_replicas if match else 0, multi_node,
                       settings, behaviour, namespace.annotations, _old_replicas(request))
    group_kind = (request.group, request.kind)
    if group_kind not in (("apps", "Deployment"), ("apps", "StatefulSet"),
                          ("autoscaling", "HorizontalPodAutoscaler")):
        shown = f"{request.kind}.{request.group}" if request.group else request.kind
        return Admission(allowed=True, code=200, message=f"unexpected resource: {shown}")
    if request.kind == "HorizontalPodAutoscaler" and request.version != "v2":
        return _denied(f'autoscaling version "{request.version}" in request is not supported')
    try:
        original = decoding.decode(request.obj, request.kind)
    except decoding.DecodeError as exc:
        return _denied(str(exc))
    try:
        if request.kind in _WORKLOADS:
            mutated = _mutate_workload(original, request.kind, context)
        else:
            mutated = _mutate_hpa(original, context)
    except gostrconv.AtoiError as exc:
        return _denied(str(exc), behaviour.bad_replicas_code)
    except _Panic:
        return _errored(NIL_POINTER_PANIC)
    assert request.obj is not None
    ops = tuple(_with_op(op, behaviour) for op in patches.diff(request.obj, mutated))
    return Admission(allowed=True, code=200, patch=ops, mutated=mutated)


_TOLERATIONS_PATH = "/spec/template/spec/tolerations"


def _with_op(op: PatchOp, behaviour: Behaviour) -> PatchOp:
    """``op``, written with the variant's operation where it adds the tolerations list."""
    if op["op"] != "add" or op["path"] != _TOLERATIONS_PATH:
        return op
    written: PatchOp = {"op": behaviour.tolerations_patch_op, "path": op["path"]}
    if "value" in op:
        written["value"] = op["value"]
    return written


def _old_replicas(request: Request) -> int | None:
    if request.operation != "UPDATE" or not isinstance(request.old, dict):
        return None
    return _int(request.old, "spec", "replicas")


class _Panic(Exception):
    """Where Go dereferences a nil pointer (a StatefulSet without spec.selector)."""


def _map(obj: Mapping[str, JsonValue], *path: str) -> JsonObject:
    """The object at ``path`` ({} when absent)."""
    node: JsonValue = dict(obj)
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _strings(obj: JsonObject, *path: str) -> dict[str, str]:
    return {k: v for k, v in _map(obj, *path).items() if isinstance(v, str)}


def _int(obj: JsonObject, *path: str) -> int:
    value = _map(obj, *path[:-1]).get(path[-1])
    return value if isinstance(value, int) else 0


def _list(obj: JsonObject, *path: str) -> list[JsonValue]:
    value = _map(obj, *path[:-1]).get(path[-1])
    return value if isinstance(value, list) else []


def _set(obj: JsonObject, value: JsonValue, *path: str) -> None:
    node = obj
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def _want(obj: JsonObject, current: int, ctx: _Context) -> int | None:
    labels = _strings(obj, "metadata", "labels") if ctx.behaviour.type_from_object \
        else _strings(obj, "spec", "template", "metadata", "labels")
    annotation = _strings(obj, "metadata", "annotations").get(keys.ANNOTATION_REPLICAS, "")
    return rules.desired_replicas(current, labels.get(keys.LABEL_TYPE, ""), ctx.policy.ftt, annotation,
                                  ctx.behaviour)


def _mutate_workload(original: JsonObject, kind: str, ctx: _Context) -> JsonObject:
    obj = decoding.copy_json(original)
    assert isinstance(obj, dict)
    behaviour, policy = ctx.behaviour, ctx.policy
    current = _int(obj, "spec", "replicas")
    want = _want(obj, current, ctx)
    changed = ctx.old_replicas is not None and ctx.old_replicas != current
    if want is not None and not (behaviour.keep_changed_replicas and changed):
        _set(obj, rules.workload_replicas(current, want, ctx.scaled, behaviour, ctx.hpa_max),
             "spec", "replicas")
    pod_spec = ("spec", "template", "spec")
    pin_empty = behaviour.pin_empty_zones and policy.zones_present
    if rules.pinning_enabled(policy, behaviour) and (policy.zones or pin_empty):
        affinity = _map(obj, *pod_spec, "affinity")
        _set(obj, rules.merge_node_affinity(affinity, policy.zones, behaviour), *pod_spec, "affinity")
    replicas = _int(obj, "spec", "replicas")
    below_max = replicas <= ctx.hpa_max or behaviour.min_domains_hpa_max_above
    max_replicas = ctx.hpa_max if ctx.scaled and below_max and behaviour.min_domains_hpa_max \
        else replicas
    template_selector = kind == "Deployment" and behaviour.deployment_template_labels
    selector: JsonObject
    if template_selector:
        labels = _strings(obj, "spec", "template", "metadata", "labels")
        selector = {"matchLabels": dict(labels)} if labels else {}
    elif kind == "StatefulSet" and _map(obj, "spec").get("selector") is None:
        raise _Panic  # Go dereferences the nil spec.selector whatever the replicas
    else:
        selector = _map(obj, "spec", "selector")
    host_spread = _host_spread(obj, ctx)
    computed = rules.spread_constraints(
        replicas=replicas, max_replicas=max_replicas, selector=selector, n_zones=policy.zone_count,
        ftt=policy.ftt, host_spread=host_spread, multi_node=ctx.multi_node, behaviour=behaviour)
    existing = _list(obj, *pod_spec, "topologySpreadConstraints")
    constraints = rules.merge_spread_constraints(existing, computed, behaviour)
    if (kind == "Deployment" and behaviour.match_label_keys) or (
            kind == "StatefulSet" and behaviour.match_label_keys_statefulsets):
        constraints = rules.add_match_label_keys(constraints)
    if constraints != existing:
        _set(obj, constraints, *pod_spec, "topologySpreadConstraints")
    if behaviour.tolerations:
        existing = _list(obj, *pod_spec, "tolerations")
        not_ready = ctx.settings.not_ready_toleration_seconds
        unreachable = ctx.settings.unreachable_toleration_seconds
        if behaviour.unreachable_from_not_ready and None not in (not_ready, unreachable):
            unreachable = not_ready
        tolerations = rules.add_tolerations(existing, not_ready_seconds=not_ready,
                                            unreachable_seconds=unreachable)
        if tolerations != existing:
            _set(obj, tolerations, *pod_spec, "tolerations")
    return obj


def _host_spread(obj: JsonObject, ctx: _Context) -> bool:
    """ParseBool of the object's own host-spread annotation (§2)."""
    sources = [_strings(obj, "metadata", "annotations")]
    if ctx.behaviour.host_spread_from_namespace:
        sources.append(dict(ctx.namespace_annotations))
    if ctx.behaviour.host_spread_from_template:
        sources.append(_strings(obj, "spec", "template", "metadata", "annotations"))
    return any(gostrconv.parse_bool(annotations.get(keys.ANNOTATION_HOST_SPREAD)) is True
               for annotations in sources)


def _mutate_hpa(original: JsonObject, ctx: _Context) -> JsonObject:
    obj = decoding.copy_json(original)
    assert isinstance(obj, dict)
    current_min = _int(obj, "spec", "minReplicas")
    want = _want(obj, current_min, ctx)
    if want is not None:
        new_min, new_max = rules.hpa_min_max(current_min, _int(obj, "spec", "maxReplicas"), want,
                                             ctx.behaviour)
        _set(obj, new_min, "spec", "minReplicas")
        if new_max != _int(obj, "spec", "maxReplicas"):
            _set(obj, new_max, "spec", "maxReplicas")
    return obj

