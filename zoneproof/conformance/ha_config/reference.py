"""The reference webhook and its variants as an in-process ``simulation.Implementation``.

The oracle of the unit tests and of the in-process mutant figures: the reference's
handler (``mutation.admit``) with its JSON Patch applied as kube-apiserver applies it, its
AdmissionReview handler, its companion and the registration the variant wants. Only this
module of ``zoneproof.conformance`` imports the reference (import-linter).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence

from zoneproof.components.reference.ha_config import companion, mutation, patches, review, variants
from zoneproof.components.reference.ha_config.variants import REFERENCE, Variant
from zoneproof.conformance.ha_config import cases, expectations, model, simulation
from zoneproof.specs.ha_config import facts, keys
from zoneproof.specs.ha_config import registration as config
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue, PatchOp

__all__ = ["Reference", "generated_catch", "run_case"]


def _labels(obj: JsonObject) -> dict[str, str]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {k: v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, dict) else {}


def _static(cluster: model.Facts, namespace: str) -> facts.StaticFacts:
    ns = cluster.namespace
    return facts.StaticFacts(namespaces={ns.name: ns} if ns else {}, hpa_list={namespace: cluster.hpas},
                             nodes=cluster.nodes)


class Reference:
    """A variant of the reference webhook, run in-process."""

    def __init__(self, variant: Variant = REFERENCE) -> None:
        self.variant = variant
        self.name = variant.name
        self.webhooks = config.render_webhooks(ca_bundle=b"in-process", url="https://in-process",
                                               selection=variants.selection(variant))
        self.forgets_deleted_hpas = variant.behaviour.hpa_cache_deletes
        self._uids = itertools.count(1)

    def admit(self, request: model.Request, cluster: model.Facts) -> simulation.Reply:
        """``mutation.admit``, its JSON Patch applied as kube-apiserver applies it."""
        verdict = mutation.admit(
            mutation.Request(uid=f"in-process-{next(self._uids)}", group=request.group,
                             version=request.version, kind=request.kind, namespace=request.namespace,
                             name=request.name, operation=request.operation, obj=request.obj,
                             old=request.old),
            _static(cluster, request.namespace), settings=cluster.settings,
            behaviour=self.variant.behaviour)
        if not verdict.allowed:
            return simulation.Reply(False, verdict.code, verdict.message, None)
        assert isinstance(request.obj, dict)
        stored = _apply_as_api_server(request.obj, verdict.patch)
        return simulation.Reply(True, verdict.code, verdict.message, stored)

    def review(self, body: bytes, cluster: model.Facts) -> tuple[int, bytes]:
        """``review.answer_review``."""
        namespace = cluster.namespace.name if cluster.namespace else ""
        answer = review.answer_review(body, _static(cluster, namespace), settings=cluster.settings,
                                      behaviour=self.variant.behaviour)
        return answer.status, answer.body

    def tracker(self) -> simulation.Tracker:
        """``companion.MultiNodeTracker``."""
        return companion.MultiNodeTracker(at_start=self.variant.behaviour.companion_at_start)

    def retriggers(self, stored: model.StoredObject, node_count: int) -> bool:
        """What ``companion.Companion.reconcile`` patches."""
        if not self.variant.behaviour.companion:
            return False
        considered = stored.namespace_labels.get(keys.LABEL_CONSIDER) == "true"
        if not considered or keys.LABEL_SKIP in _labels(stored.obj):
            return False
        constraints = expectations.normalise(stored.obj)
        for key in ("spec", "template", "spec", "topologySpreadConstraints"):
            constraints = constraints.get(key) if isinstance(constraints, dict) else None
        return companion.needs_retrigger(companion.hostname_policies(
            constraints if isinstance(constraints, list) else []), node_count > 1)


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




def run_case(case: cases.Case, variant: Variant = REFERENCE) -> simulation.CaseResult:
    """Run every step of ``case`` against a variant of the reference."""
    return simulation.run_case(case, Reference(variant))


def generated_catch(variant: Variant, *, examples: int, scenarios: int, run_seed: int = 0
                    ) -> tuple[int | None, int | None]:
    """In-process: after how many generated requests (posted to ``variant``'s AdmissionReview
    handler) and how many generated cases through the modelled API server (``scenarios``,
    then ``examples // 10`` single requests) the model first disagrees with ``variant`` (None:
    not within the budget). The fast first check of what the generated suite catches on its
    own; the live suite is the real one."""
    from hypothesis import HealthCheck, Phase, assume, given, seed, settings

    from zoneproof.conformance.ha_config import casegen, differential, generators

    implementation = Reference(variant)
    found: list[int | None] = [None, None]
    counts = [0, 0]
    def quiet(count: int) -> settings:
        return settings(max_examples=count, deadline=None, database=None,
                        suppress_health_check=list(HealthCheck), phases=(Phase.generate,))

    @quiet(examples)
    @seed(run_seed)
    @given(generators.examples())
    def posted(example: differential.Example) -> None:
        counts[0] += 1
        status, body = implementation.review(example.body(), example.facts)
        if not differential.judge(example, status, body).passed:
            found[0] = counts[0]
            raise AssertionError

    @quiet(scenarios)
    @seed(run_seed)
    @given(generators.scenarios(node_steps=True, settings_=True))
    def stepped(case: cases.Case) -> None:
        judged, settled = casegen.with_expectations(case)
        assume(settled)
        counts[1] += 1
        if not simulation.run_case(judged, implementation).passed:
            found[1] = counts[1]
            raise AssertionError

    @quiet(examples // 10)
    @seed(run_seed)
    @given(generators.examples(api_valid=True))
    def through(example: differential.Example) -> None:
        case = casegen.api_case(example, description="")
        assume(case is not None)
        assert case is not None
        judged, settled = casegen.with_expectations(case)
        assume(settled)
        counts[1] += 1
        if not simulation.run_case(judged, implementation).passed:
            found[1] = counts[1]
            raise AssertionError

    for check in (posted, stepped, through):
        if found[1] is not None and check is through:
            break
        with contextlib.suppress(AssertionError):  # the first disagreement ends the run
            check()
    return found[0], found[1]
