"""Running conformance cases in-process: the API server's part modelled, the handler called.

For each step of a case through the API server: build the submitted object (CREATE: the
case object; UPDATE: a JSON merge patch onto the stored object; ``nodes``: the
companion's empty patch when it would act; ``restart``: a new companion's first look;
``delete_hpa``: the HPA gone from what the handler reads), decide selection with the
variant's rendered webhook entries, call ``mutation.admit``, apply the JSON Patch, let
the modelled validation (``validation``) refuse what the API server would, store the
result and judge it with ``expectations.check_expectation``. A review case
(``via: review``) is posted to the reference's own AdmissionReview handler instead, in
each AdmissionReview version (``direct``), exactly as the live runner posts it over HTTPS.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from zoneproof.components.reference.ha_config import companion, mutation, patches, review, variants
from zoneproof.components.reference.ha_config.variants import REFERENCE, Variant
from zoneproof.conformance.ha_config import cases, direct, expectations, selection, validation
from zoneproof.specs.ha_config import facts, keys
from zoneproof.specs.ha_config import registration as config
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue, PatchOp

__all__ = ["CaseResult", "StepResult", "run_case"]


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step: whether the webhook was called, its verdict, the stored object, what failed."""

    index: int
    called: bool
    verdict: mutation.Admission | None
    stored: JsonObject | None
    failures: tuple[str, ...]
    label: str = ""
    """Where the step ran when not plain (``review v1beta1`` for review cases)."""


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
        return [f"steps[{s.index}]{' ' + s.label if s.label else ''}: {f}"
                for s in self.steps for f in s.failures]


def _labels(obj: JsonObject | None) -> dict[str, str]:
    meta = obj.get("metadata") if obj else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {k: v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, dict) else {}


@dataclass(frozen=True, slots=True)
class _Outcome:
    called: bool
    verdict: mutation.Admission | None
    denial: str | None = None
    code: int | None = None


@dataclass(slots=True)
class _World:
    case: cases.Case
    variant: Variant
    cluster: facts.StaticFacts
    webhooks: list[config.MutatingWebhook]
    tracker: companion.MultiNodeTracker
    stored: JsonObject | None = None
    uid: int = 0

    def submit(self, operation: str, submitted: JsonObject) -> _Outcome:
        group, version, resource = selection.RESOURCES[self.case.kind]
        ns = self.case.namespace
        call = selection.Call(group, version, resource, operation, ns.name, ns.labels, _labels(submitted),
                              _labels(self.stored) if operation == "UPDATE" else None)
        if not any(selection.selects(webhook, call) for webhook in self.webhooks):
            return self._store(submitted, _Outcome(False, None))
        self.uid += 1
        request = mutation.Request(uid=f"{self.case.id}-{self.uid}", group=group, version=version,
                                   kind=self.case.kind, namespace=ns.name, name=self.case.name,
                                   operation=operation, obj=submitted,
                                   old=self.stored if operation == "UPDATE" else None)
        verdict = mutation.admit(request, self.cluster, settings=self.case.settings,
                                 behaviour=self.variant.behaviour)
        if not verdict.allowed:
            return _Outcome(True, verdict, verdict.message, verdict.code)
        return self._store(_apply_as_api_server(submitted, verdict.patch), _Outcome(True, verdict))

    def _store(self, obj: JsonObject, outcome: _Outcome) -> _Outcome:
        """Validation, then storage (a refused object leaves the stored one as it was)."""
        refused = validation.refusal(self.case.kind, obj)
        if refused is not None:
            return dataclasses.replace(outcome, denial=refused, code=validation.UNPROCESSABLE)
        self.stored = obj
        return outcome

    def forget_hpa(self, name: str) -> None:
        """The HPA ``name`` is deleted; a cache that forgets deletions keeps it."""
        if not self.variant.behaviour.hpa_cache_deletes:
            return
        namespace = self.case.namespace.name
        kept = tuple(h for h in self.cluster.hpas(namespace) if h.name != name)
        self.cluster = dataclasses.replace(self.cluster, hpa_list={namespace: kept})


def _apply_as_api_server(obj: JsonObject, ops: Sequence[PatchOp]) -> JsonObject:
    """Apply a webhook's patch as kube-apiserver does (evanphx/json-patch v4): RFC 6902, except
    that ``replace`` of an absent member of an existing object adds it."""
    result: JsonValue = obj
    for op in ops:
        try:
            result = patches.apply(result, [op])
        except patches.PatchError:
            if op["op"] != "replace":
                raise
            added: PatchOp = {"op": "add", "path": op["path"], "value": op.get("value")}
            result = patches.apply(result, [added])
    assert isinstance(result, dict)
    return result


def _companion_acts(world: _World, nodes: int) -> bool:
    """Would the §11 controller patch the stored object after the Node count became ``nodes``?"""
    due = world.tracker.observe(nodes)
    stored, ns = world.stored, world.case.namespace
    if not (due and world.variant.behaviour.companion and stored is not None):
        return False
    if ns.labels.get(keys.LABEL_CONSIDER) != "true" or keys.LABEL_SKIP in _labels(stored):
        return False
    constraints = expectations.normalise(stored)
    for key in ("spec", "template", "spec", "topologySpreadConstraints"):
        constraints = constraints.get(key) if isinstance(constraints, dict) else None
    return companion.needs_retrigger(companion.hostname_policies(
        constraints if isinstance(constraints, list) else []), nodes > 1)


def _tracker(variant: Variant) -> companion.MultiNodeTracker:
    return companion.MultiNodeTracker(at_start=variant.behaviour.companion_at_start)


def _run_step(world: _World, step: cases.Step) -> tuple[JsonObject, _Outcome]:
    """Apply one step; (what was submitted or is judged against, outcome)."""
    if step.delete_hpa is not None:
        world.forget_hpa(step.delete_hpa)
        return copy.deepcopy(world.stored or {}), _Outcome(False, None)
    if step.nodes is not None:
        world.cluster = dataclasses.replace(world.cluster, nodes=step.nodes)
        if step.restart:
            world.tracker = _tracker(world.variant)
        submitted = copy.deepcopy(world.stored) if world.stored is not None else {}
        if _companion_acts(world, step.nodes):
            return submitted, world.submit("UPDATE", submitted)
        return submitted, _Outcome(False, None)
    if step.operation == "CREATE":
        submitted = copy.deepcopy(world.case.object)
    else:
        merged = expectations.merge_patch(world.stored, step.patch or {})
        assert isinstance(merged, dict)
        submitted = merged
    return submitted, world.submit(step.operation or "CREATE", submitted)


def _facts(case: cases.Case) -> facts.StaticFacts:
    return facts.StaticFacts(namespaces={case.namespace.name: case.namespace},
                             hpa_list={case.namespace.name: case.hpas}, nodes=case.cluster.nodes)


def _run_review_case(case: cases.Case, variant: Variant) -> CaseResult:
    """Post the case's reviews to the reference's handler, in each AdmissionReview version."""
    cluster = _facts(case)

    def send(body: bytes) -> tuple[int, bytes]:
        answer = review.answer_review(body, cluster, settings=case.settings,
                                      behaviour=variant.behaviour)
        return answer.status, answer.body

    steps = [StepResult(s.index, True, None, s.stored, s.failures, s.action)
             for api_version in direct.API_VERSIONS
             for s in direct.run_steps(case, case.namespace.name, send, api_version)]
    return CaseResult(case.id, variant.name, tuple(steps))


def run_case(case: cases.Case, variant: Variant = REFERENCE) -> CaseResult:
    """Run every step of ``case`` against ``variant``."""
    if case.direct:
        return _run_review_case(case, variant)
    world = _World(case, variant, _facts(case),
                   config.render_webhooks(ca_bundle=b"in-process", url="https://in-process",
                                          selection=variants.selection(variant)),
                   _tracker(variant))
    world.tracker.observe(case.cluster.nodes)
    results: list[StepResult] = []
    for index, step in enumerate(case.steps):
        submitted, outcome = _run_step(world, step)
        failures = expectations.check_expectation(step.expect, kind=case.kind, submitted=submitted,
                                                  stored=world.stored, denial=outcome.denial,
                                                  code=outcome.code)
        results.append(StepResult(index, outcome.called, outcome.verdict, world.stored, tuple(failures)))
    return CaseResult(case.id, variant.name, tuple(results))
