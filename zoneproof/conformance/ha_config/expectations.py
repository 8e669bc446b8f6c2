"""Judging a step: the object after it (or its refusal) against the case's expectation.

One judge for every way a case runs (in-process, through the API server, posted to the
webhook): ``check_expectation`` compares resulting objects, not patch bytes (spec §15):
nulls, empty maps and empty lists are dropped first, constraint and toleration lists are
compared as multisets. ``merge_patch`` is how an UPDATE step is built.
"""

from __future__ import annotations

import copy
import json
from collections import Counter

import jsonpatch

from zoneproof.conformance.ha_config import cases
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["check_expectation", "merge_diff", "merge_patch", "normalise"]


def normalise(value: JsonValue) -> JsonValue:
    """Drop nulls, empty maps and empty lists from objects, recursively (spec §15)."""
    if isinstance(value, dict):
        out = {k: normalise(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def merge_patch(target: JsonValue, patch: JsonValue) -> JsonValue:
    """RFC 7386 JSON merge patch (null deletes a key)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: JsonObject = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def merge_diff(old: JsonValue, new: JsonValue) -> JsonValue:
    """The RFC 7386 merge patch that turns ``old`` into ``new`` (``merge_patch`` undoes it)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return copy.deepcopy(new)
    patch: JsonObject = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old:
            patch[key] = copy.deepcopy(value)
        elif old[key] != value:
            patch[key] = merge_diff(old[key], value) if isinstance(value, dict) else copy.deepcopy(value)
    return patch


def _at(obj: JsonObject, *path: str) -> JsonValue:
    node: JsonValue = normalise(obj)
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _multiset(items: JsonValue) -> Counter[str]:
    listed = items if isinstance(items, list) else []
    return Counter(json.dumps(normalise(item), sort_keys=True) for item in listed)


def _denial_failures(expect: cases.Expectation, denial: str | None, code: int | None) -> list[str]:
    assert expect.denied is not None
    if denial is None:
        return [f"expected a denial containing {expect.denied!r}, but the request was allowed"]
    failures = [] if expect.denied in denial else [
        f"denial {denial!r} does not contain {expect.denied!r}"]
    if expect.code is not None and code != expect.code:
        failures.append(f"refused with HTTP status {code}, expected {expect.code} "
                        f"({'Forbidden' if expect.code == 403 else 'see the case'})")
    return failures


def check_expectation(expect: cases.Expectation, *, kind: str, submitted: JsonObject,
                      stored: JsonObject | None, denial: str | None,
                      code: int | None = None) -> list[str]:
    """What does not hold: ``stored`` is the object after the step, ``denial`` the refusal
    message and ``code`` its HTTP status."""
    if expect.denied is not None:
        return _denial_failures(expect, denial, code)
    if denial is not None or stored is None:
        return [f"expected the request to be allowed, but it was refused: {denial!r}"]
    failures: list[str] = []
    if expect.untouched and normalise(stored) != normalise(submitted):
        changes = jsonpatch.make_patch(submitted, stored).patch
        failures.append(f"expected the object untouched, got patched: {changes}")
    pod = ("spec", "template", "spec")
    scalar_checks = [("spec.replicas", expect.replicas, ("spec", "replicas")),
                     ("spec.minReplicas", expect.min_replicas, ("spec", "minReplicas")),
                     ("spec.maxReplicas", expect.max_replicas, ("spec", "maxReplicas")),
                     ("affinity", expect.affinity, (*pod, "affinity"))]
    for label, wanted, path in scalar_checks:
        if wanted is cases.UNSET:
            continue
        observed = _at(stored, *path)
        if observed != normalise(wanted):
            failures.append(f"{label}: expected {wanted!r}, observed {observed!r}")
    for label, wanted_list in (("topologySpreadConstraints", expect.topology_spread_constraints),
                               ("tolerations", expect.tolerations)):
        if isinstance(wanted_list, cases.Unset):
            continue
        observed_list = _at(stored, *pod, label)
        if _multiset(list(wanted_list)) != _multiset(observed_list):
            failures.append(f"{kind} {label}: expected {list(wanted_list)!r}, observed {observed_list!r}")
    return failures
