"""The mutation rules (spec §2, §5–§9) as pure functions over decoded JSON values.

Every function takes the variant's ``Behaviour``; its defaults are the spec. Inputs are
never modified: results are new values.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zoneproof.components.reference.ha_config import gostrconv
from zoneproof.components.reference.ha_config.decoding import copy_json
from zoneproof.components.reference.ha_config.variants import Behaviour
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = [
    "NamespacePolicy",
    "add_match_label_keys",
    "add_tolerations",
    "desired_replicas",
    "hpa_min_max",
    "merge_node_affinity",
    "merge_spread_constraints",
    "parse_zones",
    "spread_constraints",
    "workload_replicas",
]


def parse_zones(value: str | None, *, sort: bool = True, trim: bool = False) -> tuple[str, ...]:
    """Split on ``,``, drop duplicates and empties, sort byte-wise; no trimming (§2)."""
    if value is None:
        return ()
    entries = (zone.strip() if trim else zone for zone in value.split(","))
    unique = tuple(dict.fromkeys(zone for zone in entries if zone))
    return tuple(sorted(unique)) if sort else unique


@dataclass(frozen=True, slots=True)
class NamespacePolicy:
    """The namespace annotations as the handler reads them (§4 step 2)."""

    ftt: str | None
    zones: tuple[str, ...]
    pinning: bool
    n_zones: int = -1
    """The number of zones (-1: ``len(zones)``)."""
    zones_present: bool = False
    """The zones annotation is present (even if it gives no zone)."""

    @property
    def zone_count(self) -> int:
        """nZones (§2)."""
        return len(self.zones) if self.n_zones < 0 else self.n_zones

    @classmethod
    def from_annotations(cls, annotations: Mapping[str, str], behaviour: Behaviour,
                         labels: Mapping[str, str] | None = None) -> NamespacePolicy:
        """Absent ``ftt`` is None, unlike ``""``; invalid booleans are false. ``labels`` are
        never read (a broken behaviour falls back to them)."""
        labels = labels or {}
        ftt = annotations.get(keys.ANNOTATION_FAILURE_TOLERANCE_TYPE)
        if ftt is None and behaviour.ftt_from_labels:
            ftt = labels.get(keys.ANNOTATION_FAILURE_TOLERANCE_TYPE)
        raw_zones = annotations.get(keys.ANNOTATION_ZONES)
        if raw_zones is None and behaviour.zones_from_labels:
            raw_zones = labels.get(keys.ANNOTATION_ZONES)
        zones = parse_zones(raw_zones, sort=behaviour.sort_zones, trim=behaviour.trim_zones)
        raw_count = len(raw_zones.split(",")) if raw_zones is not None else 0
        return cls(
            ftt=ftt, zones=zones,
            pinning=gostrconv.parse_bool(annotations.get(keys.ANNOTATION_ZONE_PINNING)) is True,
            n_zones=raw_count if behaviour.zones_raw_count else -1,
            zones_present=raw_zones is not None,
        )


def _ascii_digits(value: str) -> str:
    """``value`` with every Unicode decimal digit as its ASCII digit (what Go's Atoi refuses)."""
    return "".join(str(unicodedata.decimal(c)) if unicodedata.decimal(c, None) is not None else c
                   for c in value)


def desired_replicas(current: int, type_label: str, ftt: str | None, annotation: str,
                     behaviour: Behaviour) -> int | None:
    """§5 steps 1–4: the wanted count, or None to leave replicas alone; AtoiError to deny."""
    if (current == 0 and behaviour.zero_stays_zero) or not type_label:
        return None
    controller = type_label == keys.TYPE_CONTROLLER or (
        behaviour.type_case_insensitive and type_label.lower() == keys.TYPE_CONTROLLER)
    reduced = controller and ((ftt == "" and behaviour.controller_reduction)
                              or (ftt is not None and behaviour.controller_reduction_any_ftt))
    want = (1 if reduced else 2) + behaviour.replicas_offset
    if annotation and behaviour.replicas_annotation:
        try:
            want = gostrconv.to_int32(gostrconv.atoi(
                annotation if behaviour.atoi_ascii_only else _ascii_digits(annotation)))
        except gostrconv.AtoiError:
            if behaviour.deny_bad_replicas:
                raise
    return want


def workload_replicas(current: int, want: int, scaled: bool, behaviour: Behaviour,
                      hpa_max: int = 0) -> int:
    """§5 step 5: set without HPA (also down); with an HPA only raise (never capped)."""
    if scaled and behaviour.respect_hpa:
        raised = max(current, want)
        return min(raised, max(current, hpa_max)) if behaviour.hpa_raise_capped else raised
    if not behaviour.scale_down:
        return max(current, want)
    return want


def hpa_min_max(min_replicas: int, max_replicas: int, want: int, behaviour: Behaviour) -> tuple[int, int]:
    """§6 steps 2–3: raise min to ``want``; then raise max to ``want`` if below min."""
    if min_replicas < want or not behaviour.hpa_keep_higher_min:
        min_replicas = want
    if max_replicas < min_replicas and behaviour.hpa_raise_max:
        max_replicas = want if behaviour.hpa_max_to_want else min_replicas
    return min_replicas, max_replicas


def pinning_enabled(policy: NamespacePolicy, behaviour: Behaviour) -> bool:
    """§7: ``ftt`` present (any value) or zone-pinning true."""
    if policy.ftt == "" and not behaviour.pin_on_empty_ftt:
        return policy.pinning
    return policy.ftt is not None or policy.pinning


def merge_node_affinity(affinity: JsonObject | None, zones: Sequence[str],
                        behaviour: Behaviour) -> JsonObject:
    """§7: put ``zone In zones`` at the end of every required term, replacing zone expressions."""
    result: JsonObject = copy_json(affinity) if affinity else {}
    present = result.get("nodeAffinity")
    if (not behaviour.pin_beside_preferred and isinstance(present, dict)
            and "requiredDuringSchedulingIgnoredDuringExecution" not in present):
        return result
    requirement: JsonObject = {"key": keys.TOPOLOGY_ZONE, "operator": "In", "values": list(zones)}
    node = _child(result, "nodeAffinity")
    required = _child(node, "requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms")
    if not isinstance(terms, list) or not terms or not behaviour.merge_affinity_terms:
        terms = [{}]
    merged: list[JsonValue] = []
    for term in terms:
        assert isinstance(term, dict)
        expressions = term.get("matchExpressions") or []
        assert isinstance(expressions, list)
        kept: list[JsonValue] = [e for e in expressions
                                 if not (isinstance(e, dict) and e.get("key") == keys.TOPOLOGY_ZONE)]
        merged.append({**term, "matchExpressions": [*kept, copy_json(requirement)]})
    required["nodeSelectorTerms"] = merged
    return result


def _child(parent: JsonObject, key: str) -> JsonObject:
    child = parent.get(key)
    if not isinstance(child, dict):
        child = {}
        parent[key] = child
    return child


def spread_constraints(*, replicas: int, max_replicas: int, selector: JsonObject, n_zones: int,
                       ftt: str | None, host_spread: bool, multi_node: bool,
                       behaviour: Behaviour) -> list[JsonObject] | None:
    """§8: the hostname (H) and zone (Z) constraints, or None when replicas <= 1."""
    if replicas < behaviour.spread_min_replicas:
        return None
    zone_ftt = ftt is None or ftt == "zone" or behaviour.zone_spread_any_ftt
    zone_spread = n_zones > 1 and zone_ftt
    strict_ftt = bool(ftt) or (ftt == "" and behaviour.empty_ftt_strict)
    host_strict = (host_spread or strict_ftt) and (multi_node or not behaviour.single_node_relax)

    def min_domains(count: int) -> int:
        return min(count, max_replicas)

    host: JsonObject = {"topologyKey": keys.TOPOLOGY_HOSTNAME, "maxSkew": 1,
                        "whenUnsatisfiable": "DoNotSchedule" if host_strict else "ScheduleAnyway",
                        "labelSelector": copy_json(selector)}
    if host_strict:
        host["minDomains"] = min_domains(3)
    result = [host]
    if zone_spread:
        zone: JsonObject = {"topologyKey": behaviour.zone_key, "maxSkew": 1,
                            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": copy_json(selector)}
        if behaviour.zone_min_domains:
            zone["minDomains"] = min_domains(n_zones)
        result.append(zone)
    return result


def merge_spread_constraints(existing: Sequence[JsonValue], computed: list[JsonObject] | None,
                             behaviour: Behaviour) -> list[JsonValue]:
    """§8 merge: drop hostname/zone constraints, keep the rest in order, append H then Z."""
    spread_keys = (keys.TOPOLOGY_HOSTNAME, keys.TOPOLOGY_ZONE)
    if computed is None:
        if behaviour.keep_stale_tscs:
            return copy_json(list(existing))
        computed = []
    kept: list[JsonValue] = [copy_json(c) for c in existing if isinstance(c, dict) and (
        c.get("topologyKey") not in spread_keys and behaviour.keep_other_tscs)]
    if behaviour.match_label_keys_on_kept:
        kept = add_match_label_keys(kept)
    return [*kept, *computed]


def add_match_label_keys(constraints: Sequence[JsonValue]) -> list[JsonValue]:
    """§8: append ``pod-template-hash`` to every constraint's matchLabelKeys if missing."""
    result: list[JsonValue] = []
    for constraint in constraints:
        assert isinstance(constraint, dict)
        label_keys = constraint.get("matchLabelKeys") or []
        assert isinstance(label_keys, list)
        if keys.POD_TEMPLATE_HASH not in label_keys:
            label_keys = [*label_keys, keys.POD_TEMPLATE_HASH]
        result.append({**copy_json(constraint), "matchLabelKeys": list(label_keys)})
    return result


def add_tolerations(tolerations: Sequence[JsonValue], *, not_ready_seconds: int | None,
                    unreachable_seconds: int | None) -> list[JsonValue]:
    """§9: append the NoExecute not-ready/unreachable tolerations unless already tolerated."""
    tolerated = {t.get("key") for t in tolerations
                 if isinstance(t, dict) and t.get("effect") in (None, "", "NoExecute")}
    result = copy_json(list(tolerations))
    for key, seconds in ((keys.TAINT_NOT_READY, not_ready_seconds),
                         (keys.TAINT_UNREACHABLE, unreachable_seconds)):
        if key not in tolerated and seconds is not None:
            result.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                           "tolerationSeconds": seconds})
    return result
