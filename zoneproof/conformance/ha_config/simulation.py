"""Running conformance cases in-process: the API server's part modelled, the handler called.

For each step: build the submitted object (CREATE: the case object; UPDATE: a JSON merge
patch onto the stored object; ``nodes``: the companion's empty patch when it would act),
decide selection with the variant's rendered webhook entry, call ``mutation.admit``,
apply the JSON Patch, store the result and judge it with ``check_expectation`` (which a
live harness reuses on the object the API server returns).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from dataclasses import dataclass

from zoneproof.components.reference.ha_config import companion, mutation, patches, variants
from zoneproof.components.reference.ha_config.variants import REFERENCE, Variant
from zoneproof.conformance.ha_config import cases, selection
from zoneproof.specs.ha_config import facts, keys
from zoneproof.specs.ha_config import registration as config
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["CaseResult", "StepResult", "check_expectation", "merge_patch", "normalise", "run_case"]


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step: whether the webhook was called, its verdict, the stored object, what failed."""

    index: int
    called: bool
    verdict: mutation.Verdict | None
    stored: JsonObject | None
    failures: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """A case run against one variant."""

    case_id: str
    variant: str
    steps: tuple[StepResult, ...]

    @property
    def passed(self) -> bool:
        """True when no step failed."""
        return not self.failures

    @property
    def failures(self) -> list[str]:
        """Every failure, prefixed by its step."""
        return [f"steps[{s.index}]: {f}" for s in self.steps for f in s.failures]


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


def _at(obj: JsonObject, *path: str) -> JsonValue:
    node: JsonValue = normalise(obj)
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _multiset(items: JsonValue) -> Counter[str]:
    listed = items if isinstance(items, list) else []
    return Counter(json.dumps(normalise(item), sort_keys=True) for item in listed)


def check_expectation(expect: cases.Expectation, *, kind: str, submitted: JsonObject,
                      stored: JsonObject | None, denial: str | None) -> list[str]:
    """What does not hold: ``stored`` is the object after the step, ``denial`` the refusal message."""
    if expect.denied is not None:
        if denial is None:
            return [f"expected a denial containing {expect.denied!r}, but the request was allowed"]
        return [] if expect.denied in denial else [f"denial {denial!r} does not contain {expect.denied!r}"]
    if denial is not None or stored is None:
        return [f"expected the request to be allowed, but it was refused: {denial!r}"]
    failures: list[str] = []
    if expect.untouched and normalise(stored) != normalise(submitted):
        failures.append(f"expected the object untouched, got patched: {patches.diff(submitted, stored)}")
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


def _labels(obj: JsonObject | None) -> dict[str, str]:
    meta = obj.get("metadata") if obj else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {k: v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, dict) else {}


@dataclass(slots=True)
class _World:
    case: cases.Case
    variant: Variant
    cluster: facts.StaticFacts
    webhook: config.MutatingWebhook
    tracker: companion.MultiNodeTracker
    stored: JsonObject | None = None
    uid: int = 0

    def submit(self, operation: str, submitted: JsonObject) -> tuple[bool, mutation.Verdict | None]:
        group, version, resource = selection.RESOURCES[self.case.kind]
        ns = self.case.namespace
        call = selection.Call(group, version, resource, operation, ns.name, ns.labels, _labels(submitted),
                              _labels(self.stored) if operation == "UPDATE" else None)
        if not selection.selects(self.webhook, call):
            self.stored = submitted
            return False, None
        self.uid += 1
        request = mutation.Request(uid=f"{self.case.id}-{self.uid}", group=group, version=version,
                                   kind=self.case.kind, namespace=ns.name, name=self.case.name,
                                   operation=operation, obj=submitted)
        verdict = mutation.admit(request, self.cluster, settings=self.case.settings,
                                 behaviour=self.variant.behaviour)
        if verdict.allowed:
            applied = patches.apply(submitted, list(verdict.patch))
            assert isinstance(applied, dict)
            self.stored = applied
        return True, verdict


def _companion_acts(world: _World, nodes: int) -> bool:
    """Would the §11 controller patch the stored object after the Node count became ``nodes``?"""
    due = world.tracker.observe(nodes)
    stored, ns = world.stored, world.case.namespace
    if not (due and world.variant.behaviour.companion and stored is not None):
        return False
    if ns.labels.get(keys.LABEL_CONSIDER) != "true" or keys.LABEL_SKIP in _labels(stored):
        return False
    constraints = _at(stored, "spec", "template", "spec", "topologySpreadConstraints")
    return companion.needs_retrigger(companion.hostname_policies(
        constraints if isinstance(constraints, list) else []), nodes > 1)


def run_case(case: cases.Case, variant: Variant = REFERENCE) -> CaseResult:
    """Run every step of ``case`` against ``variant``."""
    cluster = facts.StaticFacts(namespaces={case.namespace.name: case.namespace},
                                hpa_list={case.namespace.name: case.hpas}, nodes=case.cluster.nodes)
    world = _World(case, variant, cluster,
                   config.render_webhook(ca_bundle=b"in-process", url="https://in-process",
                                          selection=variants.selection(variant)),
                   companion.MultiNodeTracker())
    world.tracker.observe(case.cluster.nodes)
    results: list[StepResult] = []
    for index, step in enumerate(case.steps):
        called, verdict = False, None
        if step.nodes is not None:
            world.cluster = dataclasses.replace(world.cluster, nodes=step.nodes)
            submitted = copy.deepcopy(world.stored) if world.stored is not None else {}
            if _companion_acts(world, step.nodes):
                called, verdict = world.submit("UPDATE", submitted)
        else:
            if step.operation == "CREATE":
                submitted = copy.deepcopy(case.object)
            else:
                merged = merge_patch(world.stored, step.patch or {})
                assert isinstance(merged, dict)
                submitted = merged
            called, verdict = world.submit(step.operation or "CREATE", submitted)
        denial = verdict.message if verdict is not None and not verdict.allowed else None
        failures = check_expectation(step.expect, kind=case.kind, submitted=submitted, stored=world.stored,
                                     denial=denial)
        results.append(StepResult(index, called, verdict, world.stored, tuple(failures)))
    return CaseResult(case.id, variant.name, tuple(results))
