"""An executable specification of the high-availability-config webhook (spec §2–§11).

``admit`` is a pure function from one admission request and the facts the handler reads
(the Namespace, the HPAs of the namespace, the Node count, the two toleration settings) to
every outcome the spec allows: the resulting object, a denial with its code, reason and
message, or "allowed, unexpected resource". Usually one; more where the spec leaves a
choice open (several HPAs target the object with different maxima: "the first in list
order wins, and that order is unspecified" §4 step 3; a replicas annotation beyond int32,
which Go truncates and another language might not).

Every decision cites its section (``Outcome.notes``: field → why). The model is written
from the spec alone: it imports nothing of the reference implementation (import-linter
keeps it so), and the unit tests check that the two agree on generated inputs.

``companion_due`` and ``companion_targets`` model the node controller (§11): when it acts
and which stored objects it re-patches; ``selected`` is the spec's registration (§3).
"""

from __future__ import annotations

import marshal
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from zoneproof.conformance.ha_config import selection
from zoneproof.specs.ha_config import configuration, facts, keys
from zoneproof.specs.ha_config import registration as config
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = [
    "EXPECTED_KINDS",
    "Facts",
    "Outcome",
    "Request",
    "StoredObject",
    "admit",
    "companion_due",
    "companion_targets",
    "go_atoi",
    "go_quote",
    "parse_bool",
    "parse_zones",
    "selected",
]

EXPECTED_KINDS: Mapping[tuple[str, str], str] = {
    ("apps", "Deployment"): "§5, §7, §8, §9",
    ("apps", "StatefulSet"): "§5, §7, §8, §9",
    ("autoscaling", "HorizontalPodAutoscaler"): "§6",
}
"""§4 step 5: the (group, kind) pairs the handler mutates, and the sections that apply."""

T = TypeVar("T")
_INT32 = 1 << 31
_INT64 = 1 << 63
_UINT64_MAX = (1 << 64) - 1
_ASCII_DIGITS = re.compile(r"[0-9]*")
_POD = ("spec", "template", "spec")
_SPREAD_KEYS = (keys.TOPOLOGY_HOSTNAME, keys.TOPOLOGY_ZONE)


@dataclass(frozen=True, slots=True)
class Facts:
    """What the handler reads (§4 steps 1, 3, 4) and its component configuration (§2)."""

    namespace: facts.NamespaceInfo | None
    """None: reading the Namespace fails (it does not exist)."""
    hpas: tuple[facts.HpaInfo, ...] = ()
    """The ``autoscaling/v2`` HPAs of the request's namespace, in any order."""
    nodes: int = 3
    settings: configuration.TolerationDefaults = field(default_factory=configuration.TolerationDefaults)


@dataclass(frozen=True, slots=True)
class Request:
    """The AdmissionRequest fields the handler uses (``old`` is posted, never read: §4)."""

    operation: str
    group: str
    version: str
    kind: str
    namespace: str
    name: str
    obj: JsonValue
    """``request.object`` (None: absent)."""
    old: JsonValue = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """One answer the spec allows. Fields left None are not fixed by the spec."""

    allowed: bool
    obj: JsonObject | None = None
    """The object after the mutation (allowed answers for the mutated kinds)."""
    code: int | None = None
    reason: str | None = None
    message: str | None = None
    """The exact ``status.message``."""
    message_pattern: str | None = None
    """A regular expression the whole ``status.message`` matches (when no text is fixed)."""
    rule: str = ""
    """The sections that decided the answer's envelope (allowed/denied/errored)."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Field (``spec.replicas``, ``topologySpreadConstraints``, ...) → why it is what it is."""


@dataclass(frozen=True, slots=True)
class StoredObject:
    """An object the API server holds, as the companion controller lists it (§11)."""

    namespace_labels: Mapping[str, str]
    kind: str
    obj: JsonObject


class _Denied(Exception):
    """§10: the request is denied (403) with Go's text."""


class _Panic(Exception):
    """§8/§10: the real handler panics (a StatefulSet without ``spec.selector``)."""


def _copy(value: T) -> T:
    """A deep copy of parsed JSON (marshal copies exactly JSON's types, several times faster)."""
    copied: T = marshal.loads(marshal.dumps(value))  # type: ignore[arg-type]
    return copied


# --- Go semantics the spec names (§2, §10) ------------------------------------------------

def parse_bool(value: str | None) -> bool:
    """§2: Go ``strconv.ParseBool``; anything else (or absent) is "not true"."""
    return value in ("1", "t", "T", "TRUE", "true", "True")


def parse_zones(value: str | None) -> tuple[str, ...]:
    """§2 zones parsing: split on ``,``, drop empties and duplicates, sort byte-wise (UTF-8
    byte order is code point order), never trim."""
    return tuple(sorted({zone for zone in (value or "").split(",") if zone}))


def _printable(char: str) -> bool:
    """Go ``unicode.IsPrint``: categories L, M, N, P, S, and the ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v"}


def go_quote(value: str) -> str:
    """Go ``strconv.Quote`` (§10: "the value is double-quoted with Go escaping")."""
    parts = []
    for raw in value:
        char = "\ufffd" if 0xD800 <= ord(raw) < 0xE000 else raw  # Go decodes a lone surrogate so
        code = ord(char)
        if char in ('"', "\\"):
            parts.append("\\" + char)
        elif _printable(char):
            parts.append(char)
        elif char in _GO_ESCAPES:
            parts.append(_GO_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            parts.append(f"\\x{code:02x}")
        elif code < 0x10000:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(f"\\U{code:08x}")
    return '"' + "".join(parts) + '"'


def go_atoi(value: str) -> int:
    """§2/§10: Go ``strconv.Atoi`` on 64 bits, or _Denied with Go's text.

    An optional sign, then ASCII digits only. Digits are scanned left to right and the scan
    stops at the first problem: the value passing 2^64-1 ("value out of range"), or a
    character that is no digit ("invalid syntax"); a complete number outside int64 is out
    of range too.
    """
    def denied(why: str) -> _Denied:
        return _Denied(f"strconv.Atoi: parsing {go_quote(value)}: {why}")

    body = value[1:] if value[:1] in ("+", "-") else value
    digits = _ASCII_DIGITS.match(body)
    prefix = digits.group(0) if digits else ""
    if prefix and int(prefix) > _UINT64_MAX:
        raise denied("value out of range")
    if not body or len(prefix) != len(body):
        raise denied("invalid syntax")
    number = -int(prefix) if value.startswith("-") else int(prefix)
    if not -_INT64 <= number < _INT64:
        raise denied("value out of range")
    return number


def _int32_readings(number: int) -> tuple[int, ...]:
    """The replicas a want of ``number`` may become: itself inside int32; outside it Go's
    ``int32()`` truncation, or the number itself (the spec does not say)."""
    if -_INT32 <= number < _INT32:
        return (number,)
    wrapped = ((number + _INT32) % (1 << 32)) - _INT32
    return (wrapped, number)


# --- reading JSON --------------------------------------------------------------------------

def _at(obj: JsonValue, *path: str) -> JsonValue:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _strings(obj: JsonValue, *path: str) -> dict[str, str]:
    found = _at(obj, *path)
    return {k: v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}


def _count(obj: JsonValue, *path: str) -> int:
    """An integer field, absent (or null) read as 0 (§5, §6, §8)."""
    found = _at(obj, *path)
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def _items(obj: JsonValue, *path: str) -> list[JsonValue]:
    found = _at(obj, *path)
    return list(found) if isinstance(found, list) else []


def _put(obj: JsonObject, value: JsonValue, *path: str) -> None:
    node = obj
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value


# --- the namespace (§4 step 2) ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Namespace:
    ftt: str | None
    """``failure-tolerance-type``: None when absent, which is not ``""`` (§2, §15)."""
    zones: tuple[str, ...]
    pinning: bool

    @classmethod
    def read(cls, namespace: facts.NamespaceInfo) -> _Namespace:
        annotations = namespace.annotations  # never the labels (§2: annotations)
        return cls(annotations.get(keys.ANNOTATION_FAILURE_TOLERANCE_TYPE),
                   parse_zones(annotations.get(keys.ANNOTATION_ZONES)),
                   parse_bool(annotations.get(keys.ANNOTATION_ZONE_PINNING)))

    def shown(self) -> str:
        ftt = "absent" if self.ftt is None else repr(self.ftt)
        return f"ftt {ftt}, zones {list(self.zones)}, zone-pinning {self.pinning}"


@dataclass(frozen=True, slots=True)
class _Scaling:
    """§4 step 3: is an HPA targeting the object, and its maxReplicas."""

    scaled: bool
    hpa_max: int = 0


def _scalings(request: Request, hpas: Iterable[facts.HpaInfo]) -> tuple[_Scaling, ...]:
    """Every reading §4 step 3 allows: the matching HPAs' maxima (list order unspecified)."""
    target = f"{request.group}/{request.version}" if request.group else request.version
    maxima = sorted({h.max_replicas for h in hpas
                     if (h.target_api_version, h.target_kind, h.target_name)
                     == (target, request.kind, request.name)})
    return tuple(_Scaling(True, m) for m in maxima) or (_Scaling(False),)


# --- replicas (§5, §6) --------------------------------------------------------------------

def _wants(obj: JsonObject, ns: _Namespace) -> tuple[tuple[int, ...], str]:
    """§5 steps 3–4 (and §6 step 1): the wanted counts and why; _Denied on a bad annotation."""
    kind_label = _strings(obj, "metadata", "labels").get(keys.LABEL_TYPE, "")
    controller = kind_label == keys.TYPE_CONTROLLER
    want = 1 if ns.ftt == "" and controller else 2
    why = (f"§5 step 3 table: type {kind_label!r} "
           f"({'controller' if controller else 'server: any other non-empty value'}), "
           f"ftt {'absent' if ns.ftt is None else repr(ns.ftt)} gives {want}")
    annotation = _strings(obj, "metadata", "annotations").get(keys.ANNOTATION_REPLICAS, "")
    if annotation:
        number = go_atoi(annotation)
        return _int32_readings(number), f"§5 step 4: the replicas annotation {annotation!r} gives {number}"
    return (want,), why


def _workload_replicas(obj: JsonObject, ns: _Namespace, scaling: _Scaling
                       ) -> list[tuple[JsonObject, str]]:
    """§5: every object the replica step may give, with why."""
    current = _count(obj, "spec", "replicas")
    if current == 0:
        return [(obj, "§5 step 1: replicas 0 (or absent) are left alone, the annotation unread")]
    if not _strings(obj, "metadata", "labels").get(keys.LABEL_TYPE):
        return [(obj, "§5 step 2: no type label (or an empty one): replicas untouched")]
    wants, why = _wants(obj, ns)
    results = []
    for want in wants:
        if scaling.scaled and current >= want:
            results.append((obj, f"{why}; §5 step 5: HPA-scaled and {current} >= {want}: unchanged"))
            continue
        changed = _copy(obj)
        _put(changed, want, "spec", "replicas")
        how = "HPA-scaled and below it: raised" if scaling.scaled else "no HPA: set (also downwards)"
        results.append((changed, f"{why}; §5 step 5: {how} to {want}"))
    return results


def _hpa(obj: JsonObject, ns: _Namespace) -> list[tuple[JsonObject, dict[str, str]]]:
    """§6: minReplicas raised to want, then maxReplicas = want when below minReplicas."""
    low = _count(obj, "spec", "minReplicas")
    if low == 0:
        return [(obj, {"spec.minReplicas": "§6 step 1: minReplicas 0 (or absent): stop"})]
    if not _strings(obj, "metadata", "labels").get(keys.LABEL_TYPE):
        return [(obj, {"spec.minReplicas": "§6 step 1: no type label: stop"})]
    wants, why = _wants(obj, ns)
    results = []
    for want in wants:
        changed = _copy(obj)
        notes = {}
        if low < want:
            _put(changed, want, "spec", "minReplicas")
            notes["spec.minReplicas"] = f"{why}; §6 step 2: {low} < {want}: raised"
        else:
            notes["spec.minReplicas"] = f"{why}; §6 step 2: {low} >= {want}: never lowered"
        new_low, high = _count(changed, "spec", "minReplicas"), _count(changed, "spec", "maxReplicas")
        if high < new_low:
            _put(changed, want, "spec", "maxReplicas")
            notes["spec.maxReplicas"] = (f"§6 step 3: maxReplicas {high} < minReplicas {new_low}: set to "
                                         f"want {want}")
        else:
            notes["spec.maxReplicas"] = f"§6 step 3: maxReplicas {high} >= minReplicas {new_low}: unchanged"
        results.append((changed, notes))
    return results


# --- node affinity (§7) -------------------------------------------------------------------

def _pin(obj: JsonObject, ns: _Namespace) -> str:
    """§7: merge ``zone In <zones>`` into every required term; why."""
    enabled = ns.ftt is not None or ns.pinning
    if not enabled:
        return f"§7: pinning disabled (ftt absent and zone-pinning not true; {ns.shown()})"
    if not ns.zones:
        return f"§7: pinning enabled but no zones: no effect ({ns.shown()})"
    requirement: JsonObject = {"key": keys.TOPOLOGY_ZONE, "operator": "In", "values": list(ns.zones)}
    affinity = _at(obj, *_POD, "affinity")
    affinity = _copy(affinity) if isinstance(affinity, dict) else {}
    node_affinity = affinity.get("nodeAffinity")
    node_affinity = node_affinity if isinstance(node_affinity, dict) else {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    required = required if isinstance(required, dict) else {}
    terms = [t if isinstance(t, dict) else {} for t in _items(required, "nodeSelectorTerms")] or [{}]
    merged: list[JsonValue] = []
    for term in terms:
        kept = [e for e in _items(term, "matchExpressions")
                if not (isinstance(e, dict) and e.get("key") == keys.TOPOLOGY_ZONE)]
        merged.append({**term, "matchExpressions": [*kept, _copy(requirement)]})
    required["nodeSelectorTerms"] = merged
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    affinity["nodeAffinity"] = node_affinity
    _put(obj, affinity, *_POD, "affinity")
    return (f"§7: pinned to {list(ns.zones)} in each of {len(merged)} required term(s), older zone "
            f"expressions removed, the rest kept ({ns.shown()})")


# --- topology spread constraints (§8) ------------------------------------------------------

def _spread(obj: JsonObject, kind: str, ns: _Namespace, scaling: _Scaling, multi_node: bool) -> str:
    """§8: the hostname/zone constraints merged into the pod template; why."""
    replicas = _count(obj, "spec", "replicas")
    existing = _items(obj, *_POD, "topologySpreadConstraints")
    if kind == "StatefulSet" and _at(obj, "spec", "selector") is None:
        raise _Panic  # §8 "a StatefulSet without spec.selector makes the real handler panic"
    if replicas <= 1:
        why = f"§8: replicas {replicas} <= 1: existing constraints left exactly as they are"
        constraints = existing
    else:
        max_r = scaling.hpa_max if scaling.scaled and replicas <= scaling.hpa_max else replicas
        host_spread = parse_bool(_strings(obj, "metadata", "annotations").get(keys.ANNOTATION_HOST_SPREAD))
        zone_spread = len(ns.zones) > 1 and ns.ftt in (None, "zone")
        host_strict = (host_spread or bool(ns.ftt)) and multi_node
        if kind == "Deployment":
            labels = _at(obj, "spec", "template", "metadata", "labels")
            selector: JsonValue = {"matchLabels": _copy(labels)} if labels else {}
        else:
            selector = _copy(_at(obj, "spec", "selector"))
        host: JsonObject = {"topologyKey": keys.TOPOLOGY_HOSTNAME, "maxSkew": 1,
                            "whenUnsatisfiable": "DoNotSchedule" if host_strict else "ScheduleAnyway",
                            "labelSelector": selector}
        if host_strict:
            host["minDomains"] = min(3, max_r)
        computed: list[JsonValue] = [host]
        if zone_spread:
            computed.append({"topologyKey": keys.TOPOLOGY_ZONE, "maxSkew": 1,
                             "whenUnsatisfiable": "DoNotSchedule", "minDomains": min(len(ns.zones), max_r),
                             "labelSelector": _copy(selector)})
        kept = [c for c in existing if not (isinstance(c, dict) and c.get("topologyKey") in _SPREAD_KEYS)]
        constraints = [*_copy(kept), *computed]
        why = (f"§8: replicas {replicas}, maxR {max_r} ({'HPA max' if max_r != replicas else 'replicas'}), "
               f"host-spread {host_spread}, {'several Nodes' if multi_node else 'one Node or none'}, "
               f"{ns.shown()}: hostname {host['whenUnsatisfiable']}"
               + (f" minDomains {host['minDomains']}" if host_strict else "")
               + (f", zone minDomains {min(len(ns.zones), max_r)}" if zone_spread else ", no zone constraint")
               + "; older hostname/zone constraints dropped, others kept")
    if kind == "Deployment":
        constraints = [_with_hash_key(c) for c in constraints]
        why += "; Deployment: pod-template-hash in every constraint's matchLabelKeys"
    if constraints != existing:
        _put(obj, constraints, *_POD, "topologySpreadConstraints")
    return why


def _with_hash_key(constraint: JsonValue) -> JsonValue:
    if not isinstance(constraint, dict):
        return constraint
    label_keys = _items(constraint, "matchLabelKeys")
    if keys.POD_TEMPLATE_HASH in label_keys:
        return constraint
    return {**constraint, "matchLabelKeys": [*label_keys, keys.POD_TEMPLATE_HASH]}


# --- tolerations (§9) ---------------------------------------------------------------------

def _tolerate(obj: JsonObject, settings: configuration.TolerationDefaults) -> str:
    existing = _items(obj, *_POD, "tolerations")
    tolerated = {t.get("key") for t in existing
                 if isinstance(t, dict) and t.get("effect") in (None, "", "NoExecute")}
    added: list[JsonValue] = []
    why = []
    for key, seconds in ((keys.TAINT_NOT_READY, settings.not_ready_toleration_seconds),
                         (keys.TAINT_UNREACHABLE, settings.unreachable_toleration_seconds)):
        if key in tolerated:
            why.append(f"{key} already tolerated (effect empty or NoExecute)")
        elif seconds is None:
            why.append(f"{key}: no default configured")
        else:
            added.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": seconds})
            why.append(f"{key} appended with {seconds} s")
    if added:
        _put(obj, [*existing, *added], *_POD, "tolerations")
    return "§9: " + "; ".join(why)


# --- the handler (§4) ---------------------------------------------------------------------

def _errored(rule: str, pattern: str = ".+") -> Outcome:
    return Outcome(False, code=500, message_pattern=pattern, rule=rule)


def _denied(message: str, rule: str) -> Outcome:
    return Outcome(False, code=403, reason="Forbidden", message=message, rule=rule)


def admit(request: Request, cluster: Facts) -> tuple[Outcome, ...]:
    """Every answer §4 allows for ``request`` with ``cluster`` (one, unless the spec leaves a
    choice open)."""
    if cluster.namespace is None:
        return (_errored("§4 step 1: the Namespace cannot be read: errored 500"),)
    ns = _Namespace.read(cluster.namespace)
    scalings = _scalings(request, cluster.hpas)
    multi_node = cluster.nodes > 1
    sections = EXPECTED_KINDS.get((request.group, request.kind))
    if sections is None:
        shown = f"{request.kind}.{request.group}" if request.group else request.kind  # GroupKind
        return (Outcome(True, code=200, message=f"unexpected resource: {shown}",
                        rule="§4 step 5: another group/kind is allowed unchanged"),)
    if request.obj is None:
        return (_denied("there is no content to decode", "§4 step 6: no object: denied"),)
    decodable = _decode_problem(request.obj, request.kind)
    if decodable is not None:
        return (Outcome(False, code=403, message_pattern=".+", rule=f"§4 step 6: {decodable}: denied"),)
    assert isinstance(request.obj, dict)
    outcomes: list[Outcome] = []
    try:
        for scaling in scalings:
            if request.kind == "HorizontalPodAutoscaler":
                for obj, notes in _hpa(_copy(request.obj), ns):
                    outcomes.append(Outcome(True, obj=obj, rule="§4 step 8: allowed", notes=notes))
            else:
                outcomes += _workload(request, ns, scaling, multi_node, cluster.settings)
    except _Denied as exc:
        return (_denied(str(exc), "§5 step 4 / §10: the replicas annotation is no integer: denied 403"),)
    return _unique(outcomes)


def _workload(request: Request, ns: _Namespace, scaling: _Scaling, multi_node: bool,
              settings: configuration.TolerationDefaults) -> list[Outcome]:
    assert isinstance(request.obj, dict)
    outcomes = []
    for replicated, replicas_why in _workload_replicas(_copy(request.obj), ns, scaling):
        obj = _copy(replicated)
        notes = {"spec.replicas": replicas_why, "affinity": _pin(obj, ns)}
        try:
            notes["topologySpreadConstraints"] = _spread(obj, request.kind, ns, scaling, multi_node)
        except _Panic:
            outcomes.append(_errored("§8/§10: a StatefulSet without spec.selector makes the handler "
                                     "panic: errored 500", r"panic: .* \[recovered\]"))
            continue
        notes["tolerations"] = _tolerate(obj, settings)
        outcomes.append(Outcome(True, obj=obj, rule="§4 step 8: allowed", notes=notes))
    return outcomes


def _unique(outcomes: list[Outcome]) -> tuple[Outcome, ...]:
    seen: list[Outcome] = []
    for outcome in outcomes:
        if not any((o.allowed, o.obj, o.code, o.message, o.message_pattern)
                   == (outcome.allowed, outcome.obj, outcome.code, outcome.message, outcome.message_pattern)
                   for o in seen):
            seen.append(outcome)
    return tuple(seen)


_DECODED_INTS = {"Deployment": (("spec", "replicas"),), "StatefulSet": (("spec", "replicas"),),
                 "HorizontalPodAutoscaler": (("spec", "minReplicas"), ("spec", "maxReplicas"))}


def _decode_problem(obj: JsonValue, kind: str) -> str | None:
    """§4 step 6, for the fields the handler reads: why ``obj`` cannot be decoded, or None."""
    if not isinstance(obj, dict):
        return "the object is no JSON object"
    for path in _DECODED_INTS[kind]:
        value = _at(obj, *path)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not -_INT32 <= value < _INT32):
            return f"{'.'.join(path)} is no int32 ({value!r})"
    for path in (("metadata", "labels"), ("metadata", "annotations")):
        value = _at(obj, *path)
        if value is not None and (not isinstance(value, dict)
                                  or not all(isinstance(v, str | None) for v in value.values())):
            return f"{'.'.join(path)} is no map of strings"
    return None


# --- the node controller (§11) ------------------------------------------------------------

def companion_due(previous: bool | None, node_count: int) -> bool:
    """§11: a reconcile acts on the first observation after start (``previous`` None) and
    afterwards only when "more than one Node" differs from the previous reconcile's."""
    return previous is None or previous != (node_count > 1)


def companion_targets(objects: Iterable[StoredObject], node_count: int) -> list[int]:
    """§11: indexes of the objects an acting reconcile patches with ``{}``: Deployments and
    StatefulSets in ``consider=true`` namespaces, without the skip label, whose first
    hostname constraint is ScheduleAnyway on several Nodes or DoNotSchedule on one."""
    multi_node = node_count > 1
    wrong = "ScheduleAnyway" if multi_node else "DoNotSchedule"
    chosen = []
    for index, stored in enumerate(objects):
        if stored.kind not in ("Deployment", "StatefulSet"):
            continue
        if stored.namespace_labels.get(keys.LABEL_CONSIDER) != "true":
            continue
        if keys.LABEL_SKIP in _strings(stored.obj, "metadata", "labels"):
            continue
        hostname = [c for c in _items(stored.obj, *_POD, "topologySpreadConstraints")
                    if isinstance(c, dict) and c.get("topologyKey") == keys.TOPOLOGY_HOSTNAME]
        if hostname and hostname[0].get("whenUnsatisfiable") == wrong:
            chosen.append(index)
    return chosen


# --- selection (§3) -----------------------------------------------------------------------

_SPEC_WEBHOOKS = config.render_webhooks(ca_bundle=b"model", url="https://model", selection=config.SPEC)


def selected(call: selection.Call) -> bool:
    """§3: the API server calls the webhook registered as the spec says for ``call``."""
    return any(selection.selects(webhook, call) for webhook in _SPEC_WEBHOOKS)
