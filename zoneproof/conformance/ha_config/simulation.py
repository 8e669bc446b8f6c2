"""Running conformance cases in-process: the API server's part modelled, a handler called.

For each step of a case through the API server: build the submitted object (CREATE: the
case object; UPDATE: a JSON merge patch onto the stored object; ``nodes``: the
companion's empty patch when it would act; ``restart``: a new companion's first look;
``delete_hpa``/``put_hpa``/``annotate_namespace``: what the handler reads changes), decide
selection with the implementation's webhook entries, call its handler, let the modelled
validation (``validation``) refuse what the API server would, store the result and judge
it with ``expectations.check_expectation``. A review case (``via: review``) is posted to the
implementation's own AdmissionReview handler instead, in each AdmissionReview version
(``direct``), exactly as the live runner posts it over HTTPS.

The executable specification runs here as ``MODEL`` (``model.admit``,
``model.companion_due`` and ``companion_targets``, the spec's registration): the hand cases
check the model, and the model's runs become cases (``casegen``). The reference webhook
and its variants run here through ``reference.Reference`` (unit tests and in-process
mutant figures; nothing a run judges a component by imports it).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Protocol

from zoneproof.conformance.ha_config import (
    cases,
    differential,
    direct,
    expectations,
    model,
    selection,
    validation,
)
from zoneproof.specs.ha_config import facts
from zoneproof.specs.ha_config import registration as config
from zoneproof.specs.ha_config.payloads import JsonObject

__all__ = ["MODEL", "CaseResult", "Implementation", "Reply", "StepResult", "Tracker", "run_case"]


@dataclass(frozen=True, slots=True)
class Reply:
    """A handler's answer as the API server uses it."""

    allowed: bool
    code: int
    message: str
    obj: JsonObject | None
    """The object as the API server stores it after the webhook (None: unchanged)."""
    alternatives: int = 1
    """How many answers the spec allows (the model's; 1 for an implementation)."""


class Tracker(Protocol):
    """When the companion controller acts (§11)."""

    def observe(self, node_count: int) -> bool:
        """Record a reconcile at ``node_count`` Nodes; True when it acts."""


class Implementation(Protocol):
    """What runs in-process: a handler, its companion and the registration it is called by."""

    name: str
    webhooks: list[config.MutatingWebhook]
    forgets_deleted_hpas: bool
    """The HPAs the handler reads lose a deleted one."""

    def admit(self, request: model.Request, cluster: model.Facts) -> Reply:
        """The handler's answer to one request."""

    def review(self, body: bytes, cluster: model.Facts) -> tuple[int, bytes]:
        """The answer to one posted AdmissionReview (HTTP status, body)."""

    def tracker(self) -> Tracker:
        """A companion just started."""

    def retriggers(self, stored: model.StoredObject, node_count: int) -> bool:
        """Does an acting companion patch ``stored``?"""


class _ModelTracker:
    def __init__(self) -> None:
        self.previous: bool | None = None

    def observe(self, node_count: int) -> bool:
        due = model.companion_due(self.previous, node_count)
        self.previous = node_count > 1
        return due


class _Model:
    """The executable specification: its first allowed answer (and how many there are)."""

    name = "model"
    webhooks = config.render_webhooks(ca_bundle=b"model", url="https://model", selection=config.SPEC)
    forgets_deleted_hpas = True

    def admit(self, request: model.Request, cluster: model.Facts) -> Reply:
        """``model.admit``."""
        outcomes = model.admit(request, cluster)
        first = outcomes[0]
        message = first.message if first.message is not None else (
            "panic: " if first.code == 500 else "")  # the part of the message the spec fixes
        return Reply(first.allowed, first.code or 200, message, first.obj, len(outcomes))

    def review(self, body: bytes, cluster: model.Facts) -> tuple[int, bytes]:
        """``differential.model_answer``."""
        return differential.model_answer(body, cluster)

    def tracker(self) -> Tracker:
        """A §11 companion just started."""
        return _ModelTracker()

    def retriggers(self, stored: model.StoredObject, node_count: int) -> bool:
        """``model.companion_targets``."""
        return bool(model.companion_targets([stored], node_count))


MODEL: Implementation = _Model()


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step: whether the webhook was called, its answer, the stored object, what failed."""

    index: int
    called: bool
    reply: Reply | None
    stored: JsonObject | None
    failures: tuple[str, ...]
    label: str = ""
    """Where the step ran when not plain (``review v1beta1`` for review cases)."""
    submitted: JsonObject | None = None
    denial: str | None = None
    code: int | None = None


@dataclass(frozen=True, slots=True)
class CaseResult:
    """A case run against one implementation."""

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
    reply: Reply | None
    denial: str | None = None
    code: int | None = None


@dataclass(slots=True)
class _World:
    case: cases.Case
    implementation: Implementation
    cluster: model.Facts
    tracker: Tracker
    stored: JsonObject | None = None

    def submit(self, operation: str, submitted: JsonObject) -> _Outcome:
        group, version, resource = selection.RESOURCES[self.case.kind]
        ns = self.cluster.namespace
        assert ns is not None
        call = selection.Call(group, version, resource, operation, ns.name, ns.labels, _labels(submitted),
                              _labels(self.stored) if operation == "UPDATE" else None)
        if not any(selection.selects(webhook, call) for webhook in self.implementation.webhooks):
            return self._store(submitted, _Outcome(False, None))
        request = model.Request(operation, group, version, self.case.kind, ns.name, self.case.name,
                                submitted, self.stored if operation == "UPDATE" else None)
        reply = self.implementation.admit(request, self.cluster)
        if not reply.allowed:
            return _Outcome(True, reply, reply.message, reply.code)
        return self._store(reply.obj if reply.obj is not None else submitted, _Outcome(True, reply))

    def _store(self, obj: JsonObject, outcome: _Outcome) -> _Outcome:
        """Validation, then storage (a refused object leaves the stored one as it was)."""
        refused = validation.refusal(self.case.kind, obj)
        if refused is not None:
            return dataclasses.replace(outcome, denial=refused, code=validation.UNPROCESSABLE)
        self.stored = obj
        return outcome

    def forget_hpa(self, name: str) -> None:
        """The HPA ``name`` is deleted; a cache that forgets deletions keeps it."""
        if self.implementation.forgets_deleted_hpas:
            self.cluster = dataclasses.replace(
                self.cluster, hpas=tuple(h for h in self.cluster.hpas if h.name != name))

    def put_hpa(self, hpa: facts.HpaInfo) -> None:
        """The HPA ``hpa.name`` is created or replaced."""
        kept = tuple(h for h in self.cluster.hpas if h.name != hpa.name)
        self.cluster = dataclasses.replace(self.cluster, hpas=(*kept, hpa))

    def annotate(self, annotations: dict[str, str | None]) -> None:
        """The namespace's annotations change (None removes one)."""
        ns = self.cluster.namespace
        assert ns is not None
        merged = {k: v for k, v in {**ns.annotations, **annotations}.items() if v is not None}
        annotated = dataclasses.replace(ns, annotations=merged)
        self.cluster = dataclasses.replace(self.cluster, namespace=annotated)


def _companion_acts(world: _World, nodes: int) -> bool:
    """Would the §11 controller patch the stored object after the Node count became ``nodes``?"""
    due = world.tracker.observe(nodes)
    ns = world.cluster.namespace
    if not due or world.stored is None or ns is None:
        return False
    return world.implementation.retriggers(model.StoredObject(ns.labels, world.case.kind, world.stored),
                                           nodes)


def _run_step(world: _World, step: cases.Step) -> tuple[JsonObject, _Outcome]:
    """Apply one step; (what was submitted or is judged against, outcome)."""
    unchanged = copy.deepcopy(world.stored) if world.stored is not None else {}
    if step.delete_hpa is not None:
        world.forget_hpa(step.delete_hpa)
        return unchanged, _Outcome(False, None)
    if step.put_hpa is not None:
        world.put_hpa(step.put_hpa)
        return unchanged, _Outcome(False, None)
    if step.annotate is not None:
        world.annotate(dict(step.annotate))
        return unchanged, _Outcome(False, None)
    if step.nodes is not None:
        world.cluster = dataclasses.replace(world.cluster, nodes=step.nodes)
        if step.restart:
            world.tracker = world.implementation.tracker()
        if _companion_acts(world, step.nodes):
            return unchanged, world.submit("UPDATE", unchanged)
        return unchanged, _Outcome(False, None)
    if step.operation == "CREATE":
        submitted = copy.deepcopy(world.case.object)
    else:
        merged = expectations.merge_patch(world.stored, step.patch or {})
        assert isinstance(merged, dict)
        submitted = merged
    return submitted, world.submit(step.operation or "CREATE", submitted)


def _facts(case: cases.Case) -> model.Facts:
    return model.Facts(case.namespace, case.hpas, case.cluster.nodes, case.settings)


def _run_review_case(case: cases.Case, implementation: Implementation) -> CaseResult:
    """Post the case's reviews to the implementation's handler, in each AdmissionReview version."""
    cluster = _facts(case)

    def send(body: bytes) -> tuple[int, bytes]:
        return implementation.review(body, cluster)

    steps = [StepResult(s.index, True, None, s.stored, s.failures, s.action, s.submitted, s.denial)
             for api_version in direct.API_VERSIONS
             for s in direct.run_steps(case, case.namespace.name, send, api_version)]
    return CaseResult(case.id, implementation.name, tuple(steps))


def run_case(case: cases.Case, implementation: Implementation = MODEL) -> CaseResult:
    """Run every step of ``case`` against ``implementation``."""
    if case.direct:
        return _run_review_case(case, implementation)
    world = _World(case, implementation, _facts(case), implementation.tracker())
    world.tracker.observe(case.cluster.nodes)
    results: list[StepResult] = []
    for index, step in enumerate(case.steps):
        submitted, outcome = _run_step(world, step)
        failures = expectations.check_expectation(step.expect, kind=case.kind, submitted=submitted,
                                                  stored=world.stored, denial=outcome.denial,
                                                  code=outcome.code)
        results.append(StepResult(index, outcome.called, outcome.reply, world.stored, tuple(failures),
                                  submitted=submitted, denial=outcome.denial, code=outcome.code))
    return CaseResult(case.id, implementation.name, tuple(results))
