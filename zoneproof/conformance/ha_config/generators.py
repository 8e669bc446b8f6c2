"""Hypothesis strategies over the webhook's whole input space (spec §2–§9), edge values first.

Each table below lists the values of one input the spec talks about, simplest first (so
that shrinking ends on the simplest), with the edges drawn deliberately: every
``ParseBool`` form and near-misses, ``Atoi`` at and beyond the int32 and int64 limits,
signs, spaces and non-ASCII digits, ``failure-tolerance-type`` absent versus empty and in
odd case and spacing, zone lists with duplicates, blanks and spaces, the keys the spec
says are *not* read put where a careless webhook would read them (namespace labels, the
pod template's labels and annotations, the namespace's annotations), replicas and HPA
minima and maxima around every boundary the rules compare (0, 1, the wanted 1 or 2, the
HPA maximum, int32), Node counts 0, 1 and several, and both toleration settings from
unset through 0 to large. Free text is mixed in besides the tables.

``api_valid=True`` keeps to objects the API server accepts before and after the webhook
(valid labels, selectors matching the template, valid spread constraints, affinities and
tolerations): what may go through a real API server. Without it the inputs include what
only a direct POST can send (replicas absent or negative, a StatefulSet without selector,
no object, undecodable fields, kinds the registration never sends, a Namespace that
cannot be read).

Drawing is done by plain functions over a few strategies built once (``_index``):
hypothesis validates every new strategy object, which would cost more than the webhook.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from hypothesis import strategies as st

from zoneproof.conformance.ha_config import cases, differential, direct, model
from zoneproof.specs.ha_config import configuration, facts, keys
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = [
    "BOOL_TEXTS",
    "FTT_VALUES",
    "HPA_MAXIMA",
    "NAMES",
    "NODE_COUNTS",
    "REPLICAS_ANNOTATIONS",
    "TOLERATION_SECONDS",
    "TYPE_VALUES",
    "UNEXPECTED_KINDS",
    "ZONES_VALUES",
    "draw_facts",
    "draw_hpas",
    "draw_namespace",
    "draw_request",
    "draw_settings",
    "draw_scenario",
    "draw_world",
    "draw_world_edit",
    "examples",
    "requests",
    "sample",
    "scenarios",
]

T = TypeVar("T")

NAMES = ("app", "db", "web")
"""Object names; HPAs target them (so a workload is HPA-scaled often, §4 step 3)."""
FTT_VALUES: tuple[str | None, ...] = (None, "", "zone", "node", "Zone", "ZONE", "zone ", " zone", "Node",
                                      "nodes", "foo", "région", "\t")
"""``failure-tolerance-type``: absent (None) is not ``""`` (§2, §15)."""
ZONES_VALUES: tuple[str | None, ...] = (
    None, "", "z1", "z1,z2", "z1,z2,z3", "z3,z1,z2", "c,a,b,a,", ",", ",,z1", "z1,z1", "a,,b",
    "b, a", " a", "z1 ,z2", "z2,z1,z3,z5,z4", "Z1,z1", "zone-b,zone-a,zone-c", "zoné-1,zone-2",
    "a,a,a,b")
"""``zones``: duplicates, blanks, spaces (never trimmed), order, case, non-ASCII (§2)."""
BOOL_TEXTS: tuple[str | None, ...] = (
    None, "true", "1", "t", "T", "TRUE", "True", "false", "0", "f", "F", "FALSE", "False",
    "", "yes", "on", "TRue", "tRUE", " true", "true ", "2", "ｔｒｕｅ", "y")
"""Every Go ``ParseBool`` form, true and false, and near-misses (which are "not true")."""
TYPE_VALUES: tuple[str | None, ...] = (None, "server", "controller", "", "Controller", "CONTROLLER",
                                       " controller", "controller ", "other", "contrôleur")
"""The ``type`` label: any non-empty value other than ``controller`` is ``server`` (§2)."""
REPLICAS_ANNOTATIONS: tuple[str | None, ...] = (
    None, "", "3", "1", "2", "0", "5", "12", "+3", "-1", "-0", "007", " 3", "3 ", "three",
    "3.0", "1e3", "0x10", "1_000", "+", "-", "++1", "+-1", "１", "٣", "3\n", "2147483647",
    "2147483648", "-2147483648", "-2147483649", "4294967298", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999",
    "99999999999999999999x", "x99999999999999999999", "00000000000000000000003")
"""The ``replicas`` annotation: Go ``Atoi`` (sign, ASCII digits, int64) and int32 edges."""
STORED_REPLICAS_MOST = 12
"""The largest number (either sign) a replicas annotation gives an object sent through the
API server: the bed's controller manager expands what is stored into pods, and a StatefulSet
the webhook gave 2^31 - 1 replicas took it to 22 GB, the machine thrashing past CI's limit.
Larger numbers, in int32's range or not, are posted to the webhook directly."""
_DIGITS_ONLY = re.compile(r"[+-]?[0-9]+")
CONSIDER_VALUES: tuple[str | None, ...] = ("true", None, "True", "TRUE", "false", "", "1")
HPA_MAXIMA = (1, 2, 3, 4, 5, 6, 10, 100)
"""HPA maxReplicas: around the wanted 1/2, minDomains' 3 and the replicas drawn."""
NODE_COUNTS = (3, 1, 2, 0, 10)
TOLERATION_SECONDS: tuple[int | None, ...] = (None, 0, 60, 1, 120, 300, 86400, 1 << 31, 1 << 40)
UNEXPECTED_KINDS: tuple[tuple[str, str, str], ...] = (
    ("apps", "v1", "DaemonSet"), ("apps", "v1", "ReplicaSet"), ("batch", "v1", "Job"),
    ("", "v1", "ConfigMap"), ("", "v1", "Pod"), ("policy", "v1", "PodDisruptionBudget"),
    ("example.com", "v1", "Deployment"), ("extensions", "v1beta1", "Deployment"),
    ("autoscaling", "v1", "Scale"), ("apps", "v1", "ControllerRevision"),
    ("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler"))
"""(group, version, kind) the handler lets through unchanged (§4 step 5)."""
_REPLICAS = (1, 2, 0, 3, 4, 5, 6, 10)
_DIRECT_REPLICAS = (*_REPLICAS, 100, (1 << 31) - 1, None, -1, -(1 << 31))
"""Replicas. Large ones, None (absent) and negative ones only a direct POST sends: an object
stored through the API server is expanded into pods by the bed's controller manager (2^31 - 1
replicas took its memory to 17 GB and the bed's API server into timeouts)."""
_TARGET_VERSIONS = ("apps/v1", "apps/v1beta1", "apps/v1beta2", "extensions/v1beta1", "autoscaling/v2")
_TARGET_KINDS = ("Deployment", "StatefulSet", "deployment", "ReplicaSet", "HorizontalPodAutoscaler")
_LABEL_VALUES = ("x", "a", "v1", "etcd", "7", "b-2", "c.d")
_ODD_TEXT = st.text(alphabet=st.sampled_from("az09 ,.-_+\t\nAZé１٣"), max_size=6)
_LABEL_VALUE_PATTERN = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_TSC_KEYS = (keys.TOPOLOGY_HOSTNAME, keys.TOPOLOGY_ZONE, "example.com/rack", "topology.kubernetes.io/region",
             "failure-domain.beta.kubernetes.io/zone")
_EXPRESSIONS: tuple[JsonObject, ...] = (
    {"key": keys.TOPOLOGY_ZONE, "operator": "NotIn", "values": ["z9"]},
    {"key": "pool", "operator": "In", "values": ["cp"]},
    {"key": keys.TOPOLOGY_ZONE, "operator": "In", "values": ["z1"]},
    {"key": keys.TOPOLOGY_ZONE, "operator": "Exists"},
    {"key": "disk", "operator": "DoesNotExist"},
    {"key": "topology.kubernetes.io/region", "operator": "In", "values": ["r1"]},
)
"""Node selector requirements: zone ones (removed by §7 whatever the operator) and others."""
_FIELDS: JsonObject = {"key": "metadata.name", "operator": "NotIn", "values": ["node-9"]}
_TOLERATIONS: tuple[JsonObject, ...] = (
    {"key": keys.TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 100},
    {"key": keys.TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute"},
    {"key": keys.TAINT_NOT_READY, "operator": "Exists", "effect": "NoSchedule"},
    {"key": keys.TAINT_UNREACHABLE, "operator": "Exists"},
    {"key": keys.TAINT_NOT_READY, "operator": "Equal", "value": "x", "effect": "NoExecute"},
    {"key": keys.TAINT_UNREACHABLE, "operator": "Exists", "effect": "PreferNoSchedule"},
    {"operator": "Exists"},
    {"operator": "Exists", "effect": "NoExecute"},
    {"key": "dedicated", "operator": "Equal", "value": "cp", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready-x", "operator": "Exists", "effect": "NoExecute"},
)
"""Tolerations of every kind §9 tells apart (effect empty/NoExecute/other, key "", Exists)."""


@functools.cache
def _index(size: int) -> st.SearchStrategy[int]:
    return st.integers(0, size - 1)


def _pick(draw: st.DrawFn, values: Sequence[T], common: int = 0) -> T:
    """One of ``values``; three times in four one of the first ``common`` (the usual ones);
    shrinks towards the first."""
    if common and not _chance(draw, 4):
        return values[draw(_index(common))]
    return values[draw(_index(len(values)))]


def _chance(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws (shrinks towards False)."""
    return draw(_index(one_in)) == one_in - 1


def _text(draw: st.DrawFn, table: Sequence[str | None], common: int) -> str | None:
    """A value of ``table`` (simplest first; mostly one of the first ``common``), now and then
    free text."""
    return draw(_ODD_TEXT) if _chance(draw, 10) else _pick(draw, table, common)


@functools.cache
def _valid_label(table: tuple[str | None, ...]) -> tuple[str | None, ...]:
    """The entries of ``table`` that are valid label values (or absent)."""
    return tuple(v for v in table if v is None or (len(v) <= 63 and _LABEL_VALUE_PATTERN.fullmatch(v)))


def _some(draw: st.DrawFn, values: Sequence[T], most: int) -> list[T]:
    return [_pick(draw, values) for _ in range(draw(_index(most + 1)))]


def _put(target: dict[str, str], key: str, value: str | None) -> None:
    if value is not None:
        target[key] = value


def _fresh(obj: JsonObject) -> JsonObject:
    """``obj`` with no sub-object shared (the tables' entries are reused across draws)."""
    copied = _json(obj)
    assert isinstance(copied, dict)
    return copied


def _json(value: JsonValue) -> JsonValue:
    """``value`` as JSON carries it: no sub-object shared between two places."""
    copied: JsonValue = json.loads(json.dumps(value))
    return copied


# --- facts: the namespace, its HPAs, the Nodes, the settings -------------------------------

def draw_namespace(draw: st.DrawFn, name: str) -> facts.NamespaceInfo:
    """A Namespace: ``consider`` label, the three annotations (§2), and now and then the same
    keys as labels and host-spread/replicas as namespace annotations (never read there)."""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    _put(labels, keys.LABEL_CONSIDER, _pick(draw, CONSIDER_VALUES, 1))
    _put(annotations, keys.ANNOTATION_FAILURE_TOLERANCE_TYPE, _text(draw, FTT_VALUES, 4))
    _put(annotations, keys.ANNOTATION_ZONES, _text(draw, ZONES_VALUES, 5))
    _put(annotations, keys.ANNOTATION_ZONE_PINNING, _text(draw, BOOL_TEXTS, 3))
    if _chance(draw, 2):
        _put(labels, keys.ANNOTATION_FAILURE_TOLERANCE_TYPE, _pick(draw, _valid_label(FTT_VALUES), 4))
        _put(labels, keys.ANNOTATION_ZONES, _pick(draw, (None, "z1", "z2", "zone-a")))
        _put(labels, keys.ANNOTATION_ZONE_PINNING, _pick(draw, (None, "true", "false")))
        _put(annotations, keys.ANNOTATION_HOST_SPREAD, _pick(draw, BOOL_TEXTS[1:], 2))
        _put(annotations, keys.ANNOTATION_REPLICAS, _pick(draw, (None, "3", "1")))
    return facts.NamespaceInfo(name, labels, annotations)


def draw_hpas(draw: st.DrawFn, most: int = 4, *, prefix: str = "hpa") -> tuple[facts.HpaInfo, ...]:
    """HPAs of a namespace: exact targets (apps/v1, Deployment/StatefulSet, a name objects use),
    near-misses differing from one in the apiVersion alone or the kind alone (an object of
    that name and kind meets them often), and free ones (other names too) (§4 step 3)."""
    found = []
    for index in range(draw(_index(most + 1))):
        version, kind, name = "apps/v1", _pick(draw, ("Deployment", "StatefulSet")), _pick(draw, NAMES)
        miss = draw(_index(5))  # 0, 1: exact; 2: only the apiVersion differs; 3: only the kind; 4: free
        if miss == 2:
            version = _pick(draw, _TARGET_VERSIONS[1:])
        elif miss == 3:
            kind = _pick(draw, [k for k in _TARGET_KINDS if k != kind])
        elif miss == 4:
            version, kind = _pick(draw, _TARGET_VERSIONS), _pick(draw, _TARGET_KINDS)
            name = _pick(draw, (*NAMES, "other"))
        found.append(facts.HpaInfo(f"{prefix}-{index}", version, kind, name, _pick(draw, HPA_MAXIMA)))
    return tuple(found)


def draw_settings(draw: st.DrawFn) -> configuration.TolerationDefaults:
    """The two toleration settings, each unset, 0, or up to large (§2)."""
    return configuration.TolerationDefaults(_pick(draw, TOLERATION_SECONDS), _pick(draw, TOLERATION_SECONDS))


def draw_facts(draw: st.DrawFn, namespace: str = "team") -> model.Facts:
    """Everything the handler reads, drawn freely (in-process runs); now and then the
    Namespace cannot be read."""
    info = None if _chance(draw, 40) else draw_namespace(draw, namespace)
    return model.Facts(info, draw_hpas(draw), _pick(draw, NODE_COUNTS), draw_settings(draw))


# --- objects --------------------------------------------------------------------------------

def _many_replicas(value: str | None) -> bool:
    """Whether ``value`` is a whole number beyond ``STORED_REPLICAS_MOST`` either way."""
    return (value is not None and bool(_DIGITS_ONLY.fullmatch(value))
            and abs(int(value)) > STORED_REPLICAS_MOST)


_STORABLE_REPLICAS_ANNOTATIONS = tuple(v for v in REPLICAS_ANNOTATIONS if not _many_replicas(v))


def _replicas_annotation(draw: st.DrawFn, *, api_valid: bool) -> str | None:
    """A replicas annotation; for the API server none with many replicas (``STORED_REPLICAS_MOST``)."""
    value = _text(draw, REPLICAS_ANNOTATIONS, 1)
    if api_valid and _many_replicas(value):
        return _pick(draw, _STORABLE_REPLICAS_ANNOTATIONS, 1)
    return value


def _object_meta(draw: st.DrawFn, name: str, *, api_valid: bool, workload: bool) -> JsonObject:
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    _put(labels, keys.LABEL_TYPE, _pick(draw, _valid_label(TYPE_VALUES) if api_valid else TYPE_VALUES, 3))
    if _chance(draw, 5):
        labels[keys.LABEL_SKIP] = _pick(draw, ("true", "false", ""))
    if _chance(draw, 2):
        labels["team"] = _pick(draw, _LABEL_VALUES)
    _put(annotations, keys.ANNOTATION_REPLICAS, _replicas_annotation(draw, api_valid=api_valid))
    if workload:
        _put(annotations, keys.ANNOTATION_HOST_SPREAD, _text(draw, BOOL_TEXTS, 2))
    meta: JsonObject = {"name": name}
    if labels or _chance(draw, 2):
        meta["labels"] = dict(labels)
    if annotations or _chance(draw, 2):
        meta["annotations"] = dict(annotations)
    return meta


def _selector(draw: st.DrawFn, template_labels: dict[str, str], *, api_valid: bool) -> JsonObject:
    """A label selector matching ``template_labels`` (a subset, maybe with expressions)."""
    keys_ = sorted(template_labels)
    chosen = sorted({_pick(draw, keys_) for _ in range(1 + draw(_index(2)))}) if keys_ else []
    selector: JsonObject = {"matchLabels": {k: template_labels[k] for k in chosen}}
    if _chance(draw, 4):
        key = _pick(draw, keys_) if keys_ else "app"
        requirements: tuple[JsonObject, ...] = (
            {"key": key, "operator": "In", "values": [template_labels.get(key, "x"), "other"]},
            {"key": key, "operator": "Exists"},
            {"key": "absent-key", "operator": "DoesNotExist"})
        selector["matchExpressions"] = [_pick(draw, requirements)]
    if not api_valid and _chance(draw, 7):
        odd: tuple[JsonObject, ...] = ({}, {"matchLabels": {"other": "y"}})
        selector = _pick(draw, odd)
    return selector


def _constraint(draw: st.DrawFn, template_labels: dict[str, str], *, api_valid: bool) -> JsonObject:
    when = _pick(draw, ("ScheduleAnyway", "DoNotSchedule"))
    constraint: JsonObject = {"topologyKey": _pick(draw, _TSC_KEYS), "maxSkew": _pick(draw, (1, 2, 3)),
                              "whenUnsatisfiable": when}
    if when == "DoNotSchedule" and _chance(draw, 2):
        constraint["minDomains"] = _pick(draw, (2, 1, 3, 5))
    if api_valid or not _chance(draw, 5):
        own: JsonObject = {"matchLabels": dict(template_labels) if template_labels else {"app": "x"}}
        selectors: tuple[JsonObject, ...] = (
            own, {"matchLabels": {"app": "other"}},
            {"matchExpressions": [{"key": "app", "operator": "Exists"}]})
        constraint["labelSelector"] = _pick(draw, selectors)
        label_keys_choices: tuple[list[JsonValue] | None, ...] = (
            None, [keys.POD_TEMPLATE_HASH], ["version"], ["version", keys.POD_TEMPLATE_HASH])
        label_keys = _pick(draw, label_keys_choices)
        if label_keys is not None:
            constraint["matchLabelKeys"] = label_keys
    elif _chance(draw, 2):
        constraint["matchLabelKeys"] = [keys.POD_TEMPLATE_HASH]
    return constraint


def _term(draw: st.DrawFn, *, api_valid: bool) -> JsonObject:
    expressions: list[JsonValue] = list(_some(draw, _EXPRESSIONS, 3))
    term: JsonObject = {}
    if expressions:
        term["matchExpressions"] = expressions
    if _chance(draw, 4) or (api_valid and not expressions):
        term["matchFields"] = [dict(_FIELDS)]
    return term


def _affinity(draw: st.DrawFn, *, api_valid: bool) -> JsonObject | None:
    """None, or required terms (0–3; several ORed), preferred ones, pod anti-affinity (§7)."""
    shape = draw(_index(7))
    if shape == 0:
        return None
    affinity: JsonObject = {}
    node: JsonObject = {}
    if shape in (1, 2, 3, 5):
        terms: list[JsonValue] = [_term(draw, api_valid=api_valid) for _ in range(draw(_index(4)))]
        if api_valid and not terms:
            terms = [_term(draw, api_valid=api_valid)]
        node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if shape in (2, 4, 5):
        node["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": keys.TOPOLOGY_ZONE, "operator": "In", "values": ["z2"]}]}}]
    if node:
        affinity["nodeAffinity"] = node
    if shape in (3, 6):
        affinity["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": keys.TOPOLOGY_HOSTNAME,
                                              "labelSelector": {"matchLabels": {"app": "x"}}}}]}
    return affinity


def _pod_spec(draw: st.DrawFn, template_labels: dict[str, str], *, api_valid: bool) -> JsonObject:
    """A pod template's spec: affinity (§7), spread constraints (§8), tolerations (§9)."""
    pod: JsonObject = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    affinity = _affinity(draw, api_valid=api_valid)
    if affinity is not None:
        pod["affinity"] = affinity
    constraints: list[JsonValue] = [_constraint(draw, template_labels, api_valid=api_valid)
                                     for _ in range(draw(_index(5)))]
    if api_valid:  # the API server refuses two constraints of the same key and policy
        unique = {(c["topologyKey"], c["whenUnsatisfiable"]): c for c in constraints if isinstance(c, dict)}
        constraints = list(unique.values())
    if constraints:
        pod["topologySpreadConstraints"] = constraints
    tolerations: list[JsonValue] = list(_some(draw, _TOLERATIONS, 4))
    if tolerations:
        pod["tolerations"] = tolerations
    return pod


def draw_workload(draw: st.DrawFn, kind: str, name: str, *, api_valid: bool = False) -> JsonObject:
    """A Deployment or StatefulSet (apps/v1) of every shape §5, §7, §8, §9 read."""
    meta = _object_meta(draw, name, api_valid=api_valid, workload=True)
    template_labels = {"app": name}
    if _chance(draw, 2):
        template_labels["rev"] = _pick(draw, _LABEL_VALUES)
    if _chance(draw, 4):  # the type label in the wrong place (§2: not the template's)
        template_labels[keys.LABEL_TYPE] = _pick(draw, ("controller", "server"))
    if not api_valid and _chance(draw, 9):
        template_labels = {}
    template_meta: JsonObject = {"labels": dict(template_labels)}
    if _chance(draw, 3):  # annotations the handler never reads (§2: the object's own)
        template_meta["annotations"] = {keys.ANNOTATION_HOST_SPREAD: _pick(draw, ("true", "1", "True")),
                                        keys.ANNOTATION_REPLICAS: _pick(draw, ("3", "1", "5"))}
    pod = _pod_spec(draw, template_labels, api_valid=api_valid)
    spec: JsonObject = {"template": {"metadata": template_meta, "spec": pod}}
    replicas = _pick(draw, _REPLICAS if api_valid else _DIRECT_REPLICAS, 4)
    if replicas is not None:
        spec["replicas"] = replicas
    if api_valid or not _chance(draw, 12):
        spec["selector"] = _selector(draw, template_labels, api_valid=api_valid)
    if kind == "StatefulSet":
        spec["serviceName"] = name
        if api_valid:  # its one Pod stays Pending: no Pods pile up from the objects a run stores
            pod["nodeSelector"] = {"zoneproof.dev/no-such-node": "true"}
    elif api_valid:
        spec["paused"] = True  # no ReplicaSets or Pods from the objects a run stores
    return _fresh({"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec})


def draw_hpa(draw: st.DrawFn, name: str, *, api_valid: bool = False) -> JsonObject:
    """An autoscaling/v2 HPA with minReplicas/maxReplicas around every §6 boundary."""
    meta = _object_meta(draw, name, api_valid=api_valid, workload=False)
    low = _pick(draw, (1, 2, 3, 5, 12) if api_valid else (1, 2, 3, 0, 5, 12, None))
    high = (low or 1) + _pick(draw, (0, 1, 2, 4))
    if not api_valid and _chance(draw, 6):
        high = max((low or 1) - 1, 1)  # below the minimum: only a direct POST can send it
    spec: JsonObject = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": _pick(
        draw, ("Deployment", "StatefulSet")), "name": _pick(draw, NAMES)}, "maxReplicas": high}
    if low is not None:
        spec["minReplicas"] = low
    return _fresh({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
                   "spec": spec})


def _undecodable(draw: st.DrawFn, obj: JsonObject) -> JsonValue:
    """``obj`` with a field the handler reads of the wrong type, or no object at all (§4 step 6)."""
    choice = draw(_index(4))
    if choice == 0:
        return None
    meta = obj.get("metadata")
    if choice == 1:
        return {**obj, "metadata": {**(meta if isinstance(meta, dict) else {}), "labels": {"a": 1}}}
    spec = obj.get("spec")
    field = "minReplicas" if obj.get("kind") == "HorizontalPodAutoscaler" else "replicas"
    return {**obj, "spec": {**(spec if isinstance(spec, dict) else {}),
                            field: "2" if choice == 2 else 1 << 33}}


def draw_request(draw: st.DrawFn, namespace: str, *, api_valid: bool = False) -> model.Request:
    """An admission request (CREATE, or UPDATE with an old object differing anywhere)."""
    kinds = ("Deployment", "StatefulSet", "HorizontalPodAutoscaler")
    kind = _pick(draw, kinds if api_valid else (*kinds, "unexpected"))
    name = _pick(draw, NAMES)
    obj: JsonValue
    if kind == "unexpected":
        group, version, kind = _pick(draw, UNEXPECTED_KINDS)
        obj = {**draw_workload(draw, "Deployment", name), "apiVersion":
               f"{group}/{version}" if group else version, "kind": kind}
        if _chance(draw, 6):
            obj = None
    elif kind == "HorizontalPodAutoscaler":
        group, version = "autoscaling", "v2"
        obj = draw_hpa(draw, name, api_valid=api_valid)
    else:
        group, version = "apps", "v1"
        obj = draw_workload(draw, kind, name, api_valid=api_valid)
    if not api_valid and isinstance(obj, dict) and _chance(draw, 30):
        obj = _undecodable(draw, obj)
    operation = _pick(draw, ("CREATE", "UPDATE"))
    old: JsonValue = None
    if operation == "UPDATE":
        old = draw_hpa(draw, name, api_valid=api_valid) if kind == "HorizontalPodAutoscaler" else \
            draw_workload(draw, kind if kind in ("Deployment", "StatefulSet") else "Deployment", name,
                          api_valid=api_valid)
    if isinstance(obj, dict) and isinstance(meta := obj.get("metadata"), dict):
        meta["namespace"] = namespace
    return model.Request(operation, group, version, kind, namespace, name, _json(obj), _json(old))


@st.composite
def requests(draw: st.DrawFn, namespace: str = "team", *, api_valid: bool = False) -> model.Request:
    """Strategy: ``draw_request``."""
    return draw_request(draw, namespace, api_valid=api_valid)


@st.composite
def examples(draw: st.DrawFn, worlds: Sequence[model.Facts] | None = None, *,
             api_valid: bool = False) -> differential.Example:
    """A request posted in one of ``worlds`` (facts that exist in a cluster), or in facts drawn
    freely when ``worlds`` is None (in-process), as admission.k8s.io/v1 or v1beta1."""
    facts_ = _pick(draw, worlds) if worlds else draw_facts(draw)
    name = facts_.namespace.name if facts_.namespace else "team"
    if worlds and not api_valid and _chance(draw, 25):
        # §4 step 1: the request's Namespace does not exist (no world makes "<name>-absent")
        name, facts_ = f"{name}-absent", dataclasses.replace(facts_, namespace=None)
    request = draw_request(draw, name, api_valid=api_valid)
    served = ""
    if api_valid and request.kind == "HorizontalPodAutoscaler" and request.operation == "CREATE" \
            and _chance(draw, 3):
        served = "autoscaling/v1"  # §3 matchPolicy Equivalent: it reaches the webhook as v2
    return differential.Example(request, facts_, _pick(draw, direct.API_VERSIONS), served_version=served)


# --- scenarios: a stored object while the facts change ----------------------------------------

_PATCHABLE: tuple[tuple[str, ...], ...] = (
    ("metadata", "labels"), ("metadata", "annotations"), ("spec", "replicas"),
    ("spec", "template", "spec", "affinity"), ("spec", "template", "spec", "topologySpreadConstraints"),
    ("spec", "template", "spec", "tolerations"), ("spec", "minReplicas"), ("spec", "maxReplicas"))


def _merge_patch(draw: st.DrawFn, kind: str, name: str) -> JsonObject:
    """A JSON merge patch setting some fields to those of another object of the kind (an
    absent field removed with null; lists replaced whole, maps merged)."""
    other = draw_hpa(draw, name, api_valid=True) if kind == "HorizontalPodAutoscaler" else \
        draw_workload(draw, kind, name, api_valid=True)
    paths = [p for p in _PATCHABLE if (p[-1] in ("minReplicas", "maxReplicas"))
             == (kind == "HorizontalPodAutoscaler")]
    patch: JsonObject = {}
    for path in sorted({_pick(draw, paths) for _ in range(1 + draw(_index(3)))}):
        node: JsonValue = other
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        target = patch
        for key in path[:-1]:
            child = target.setdefault(key, {})
            assert isinstance(child, dict)
            target = child
        target[path[-1]] = node
    return patch


def _annotation_change(draw: st.DrawFn) -> dict[str, str | None]:
    """New values (None: removed) for some of the namespace's annotations (§2)."""
    tables: tuple[tuple[str, tuple[str | None, ...]], ...] = (
        (keys.ANNOTATION_FAILURE_TOLERANCE_TYPE, FTT_VALUES), (keys.ANNOTATION_ZONES, ZONES_VALUES),
        (keys.ANNOTATION_ZONE_PINNING, BOOL_TEXTS))
    chosen = {_pick(draw, range(len(tables))) for _ in range(1 + draw(_index(3)))}
    return {tables[i][0]: _pick(draw, tables[i][1]) for i in sorted(chosen)}


def draw_scenario(draw: st.DrawFn, *, case_id: str = "generated", node_steps: bool = False,
                  settings_: bool = False) -> cases.Case:
    """A case without expectations: an object CREATEd through the API server, then UPDATEs
    while the facts change: namespace annotations edited, HPAs created, retargeted and
    deleted, and (``node_steps``) the Node count crossing 1 with or without a webhook restart
    (§11). ``casegen.with_expectations`` fills the expectations in from the model."""
    kind = _pick(draw, ("Deployment", "StatefulSet", "HorizontalPodAutoscaler"))
    name = _pick(draw, NAMES)
    obj = draw_hpa(draw, name, api_valid=True) if kind == "HorizontalPodAutoscaler" else \
        draw_workload(draw, kind, name, api_valid=True)
    namespace = draw_namespace(draw, f"hac-{case_id}")
    hpas = [h for h in draw_hpas(draw, 2) if h.target_kind and h.target_name]
    nodes = _pick(draw, (1, 3) if node_steps else (3,))
    steps: list[cases.Step] = [cases.Step("CREATE", None, None, cases.Expectation())]
    names = [h.name for h in hpas]
    for index in range(1 + draw(_index(5))):
        choice = _pick(draw, ("update", "annotate", "put_hpa", "delete_hpa", "nodes") if node_steps
                       else ("update", "annotate", "put_hpa", "delete_hpa"))
        if choice == "annotate":
            steps.append(cases.Step(None, None, None, cases.Expectation(), annotate=_annotation_change(draw)))
        elif choice == "put_hpa":
            target = _pick(draw, names) if names and _chance(draw, 2) else f"hpa-new-{index}"
            exact = not _chance(draw, 3)
            hpa = facts.HpaInfo(target, "apps/v1" if exact else _pick(draw, _TARGET_VERSIONS),
                                kind if exact and kind != "HorizontalPodAutoscaler" else
                                _pick(draw, ("Deployment", "StatefulSet")),
                                name if exact else _pick(draw, (*NAMES, "other")), _pick(draw, HPA_MAXIMA))
            names = [*dict.fromkeys([*names, target])]
            steps.append(cases.Step(None, None, None, cases.Expectation(), put_hpa=hpa))
        elif choice == "delete_hpa" and names:
            gone = _pick(draw, names)
            names = [n for n in names if n != gone]
            steps.append(cases.Step(None, None, None, cases.Expectation(), delete_hpa=gone))
        elif choice == "nodes" and kind != "HorizontalPodAutoscaler":
            nodes = 3 if nodes == 1 else 1
            steps.append(cases.Step(None, None, nodes, cases.Expectation(), restart=_chance(draw, 3)))
        else:
            steps.append(cases.Step("UPDATE", _merge_patch(draw, kind, name), None, cases.Expectation()))
    settings = draw_settings(draw) if settings_ else configuration.TolerationDefaults()
    return cases.Case(
        id=case_id, description="generated scenario", spec="§4–§11 (generated; expectations from the model)",
        namespace=namespace, cluster=cases.ClusterShape(_first_nodes(steps, nodes)),
        hpas=tuple(hpas), settings=settings, object=obj, steps=tuple(steps), path=Path(f"{case_id}.yaml"))


def _first_nodes(steps: Sequence[cases.Step], last: int) -> int:
    """The Node count before the first ``nodes`` step (counts alternate between 1 and 3)."""
    flips = sum(step.nodes is not None for step in steps)
    return last if flips % 2 == 0 else (1 if last == 3 else 3)


@st.composite
def scenarios(draw: st.DrawFn, *, node_steps: bool = False, settings_: bool = False) -> cases.Case:
    """Strategy: ``draw_scenario``."""
    return draw_scenario(draw, node_steps=node_steps, settings_=settings_)


# --- worlds: facts made real in a cluster -------------------------------------------------------

def draw_world(draw: st.DrawFn) -> tuple[facts.NamespaceInfo, tuple[facts.HpaInfo, ...]]:
    """A namespace (its name is the cluster's to give) and its HPAs."""
    return draw_namespace(draw, "world"), draw_hpas(draw)


def draw_world_edit(draw: st.DrawFn, current: model.Facts
                    ) -> tuple[dict[str, str | None], tuple[facts.HpaInfo, ...], tuple[str, ...]]:
    """A change of a world: annotations set or removed, HPAs created or retargeted or resized
    (``put``), HPAs deleted."""
    names = [h.name for h in current.hpas if h.name != "zoneproof-sync"]
    deleted = tuple(sorted({_pick(draw, names) for _ in range(draw(_index(2)))})) if names else ()
    put = [h for h in draw_hpas(draw, 2, prefix="hpa-new")]
    for hpa in draw_hpas(draw, 2):
        if names and _chance(draw, 2):  # an existing HPA retargeted or resized
            put.append(facts.HpaInfo(_pick(draw, names), hpa.target_api_version, hpa.target_kind,
                                     hpa.target_name, hpa.max_replicas))
    kept = tuple(h for h in put if h.name not in deleted)
    return _annotation_change(draw), tuple({h.name: h for h in kept}.values()), deleted


def sample(strategy: st.SearchStrategy[T], count: int, seed: int) -> list[T]:
    """``count`` values of ``strategy`` drawn with ``seed`` (the same seed, the same values)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    found: list[T] = []

    @settings(max_examples=count, phases=(Phase.generate,), database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @seeded(seed)
    @given(strategy)
    def collect(value: T) -> None:
        found.append(value)

    collect()
    return found[:count]
