"""The executable specification: it agrees with the reference on generated inputs, the hand
cases hold for it, its Go helpers agree with the reference's, and it is idempotent."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from zoneproof.components.reference.ha_config import gostrconv, rules
from zoneproof.components.reference.ha_config.variants import Behaviour
from zoneproof.conformance.ha_config import (
    casegen,
    cases,
    differential,
    expectations,
    generators,
    model,
    reference,
    simulation,
)
from zoneproof.specs.ha_config import facts, keys


def generated(examples: int) -> settings:
    """Settings of a generated test: ``examples`` inputs, no deadline, no example database."""
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
REFERENCE = reference.Reference()


@generated(400)
@given(generators.examples())
def test_the_reference_answers_every_generated_request_as_the_model_says(
        example: differential.Example) -> None:
    status, body = REFERENCE.review(example.body(), example.facts)
    verdict = differential.judge(example, status, body)
    assert verdict.passed, "\n".join(d.shown() for d in verdict.differences)
    if verdict.changed and verdict.patched is not None:  # §4: running it again changes nothing
        again = differential.resubmission(example, verdict.patched)
        status, body = REFERENCE.review(again.body(), again.facts)
        judged = differential.judge(again, status, body)
        assert judged.passed and not judged.changed, [d.shown() for d in judged.differences]


@generated(120)
@given(generators.scenarios(node_steps=True, settings_=True))
def test_the_reference_passes_every_generated_scenario(case: cases.Case) -> None:
    judged, settled = casegen.with_expectations(case)
    assume(settled)
    result = simulation.run_case(judged, REFERENCE)
    assert result.passed, result.failures


@generated(150)
@given(generators.examples(api_valid=True))
def test_the_reference_through_the_api_server_is_what_the_model_says(example: differential.Example) -> None:
    """A generated request as a case through the modelled API server (selection, the handler,
    the patch as the API server applies it, validation), expectations from the model."""
    case = casegen.api_case(example, description="generated")
    assume(case is not None)
    assert case is not None
    judged, settled = casegen.with_expectations(case)
    assume(settled)
    result = simulation.run_case(judged, REFERENCE)
    assert result.passed, result.failures


@pytest.mark.parametrize("case", cases.load_cases(), ids=lambda c: c.id)
def test_every_hand_case_holds_for_the_model(case: cases.Case) -> None:
    result = simulation.run_case(case, simulation.MODEL)
    assert result.passed, "\n".join(result.failures)


@generated(300)
@given(generators.examples())
def test_the_model_is_idempotent(example: differential.Example) -> None:
    """§4: running the mutation on its own output changes nothing (the first reading: an int32
    replicas count; the other reading of a wider annotation is no int32 to decode)."""
    for outcome in example.expected()[:1]:
        if outcome.obj is None:
            continue
        again = model.admit(dataclasses.replace(example.request, operation="UPDATE", obj=outcome.obj),
                            example.facts)
        assert any(o.obj is not None and expectations.normalise(o.obj) == expectations.normalise(outcome.obj)
                   for o in again)


_DIGITS = st.text(alphabet=st.sampled_from("0123456789+-_ x١٣\n"), max_size=24)


@given(st.one_of(_DIGITS, st.sampled_from(generators.REPLICAS_ANNOTATIONS[2:])) | st.text(max_size=6))
def test_go_atoi_agrees_with_the_reference(value: str) -> None:
    try:
        expected: int | str = gostrconv.atoi(value)
    except gostrconv.AtoiError as exc:
        expected = str(exc)
    try:
        observed: int | str = model.go_atoi(value)
    except Exception as exc:  # model._Denied
        observed = str(exc)
    assert observed == expected


@given(st.text(max_size=12))
def test_go_quote_and_parse_bool_agree_with_the_reference(value: str) -> None:
    assume(not any(0xD800 <= ord(c) < 0xE000 for c in value))
    assert model.go_quote(value) == gostrconv.quote(value)
    assert model.parse_bool(value) == (gostrconv.parse_bool(value) is True)
    assert model.parse_zones(value) == rules.parse_zones(value)


@pytest.mark.parametrize(("value", "message"), [
    ("three", 'strconv.Atoi: parsing "three": invalid syntax'),
    (" 3", 'strconv.Atoi: parsing " 3": invalid syntax'),
    ("99999999999999999999", 'strconv.Atoi: parsing "99999999999999999999": value out of range'),
    ("99999999999999999999x", 'strconv.Atoi: parsing "99999999999999999999x": value out of range'),
    ("-9223372036854775809", 'strconv.Atoi: parsing "-9223372036854775809": value out of range'),
    ("３\n", 'strconv.Atoi: parsing "３\\n": invalid syntax'),
])
def test_go_atoi_denials_are_gos_text(value: str, message: str) -> None:
    with pytest.raises(Exception, match="^" + message.replace("\\", "\\\\").replace("(", r"\(") + "$"):
        model.go_atoi(value)


def deployment(replicas: int = 1, **annotations: str) -> dict[str, object]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "app", "namespace": "team", "labels": {keys.LABEL_TYPE: "server"},
                         "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}}}


def request(obj: object) -> model.Request:
    return model.Request("CREATE", "apps", "v1", "Deployment", "team", "app", obj)  # type: ignore[arg-type]


TEAM = facts.NamespaceInfo("team", {keys.LABEL_CONSIDER: "true"})


def test_open_choices_are_all_allowed() -> None:
    """Several matching HPAs (list order unspecified, §4 step 3); an annotation beyond int32."""
    twice = (facts.HpaInfo("a", "apps/v1", "Deployment", "app", 2),
             facts.HpaInfo("b", "apps/v1", "Deployment", "app", 5))
    strict = dataclasses.replace(TEAM, annotations={keys.ANNOTATION_FAILURE_TOLERANCE_TYPE: "node"})
    outcomes = model.admit(request(deployment(2)), model.Facts(strict, twice))
    hostname = [o.obj["spec"]["template"]["spec"]["topologySpreadConstraints"][0]  # type: ignore[index]
                for o in outcomes if o.obj]
    assert sorted(h["minDomains"] for h in hostname) == [2, 3]
    wide = model.admit(request(deployment(1, **{keys.ANNOTATION_REPLICAS: "4294967298"})), model.Facts(TEAM))
    assert [o.obj["spec"]["replicas"] for o in wide if o.obj] == [2, 4294967298]  # type: ignore[index]


def test_the_namespace_unread_is_errored_and_other_kinds_pass() -> None:
    assert model.admit(request(deployment()), model.Facts(None))[0].code == 500
    other = dataclasses.replace(request(None), group="", kind="ConfigMap")
    [passed] = model.admit(other, model.Facts(TEAM))
    assert (passed.allowed, passed.obj, passed.code, passed.message) == (
        True, None, 200, "unexpected resource: ConfigMap")
    assert model.admit(request(None), model.Facts(TEAM))[0].message == "there is no content to decode"


def test_the_companion_acts_at_start_and_on_a_flip_only() -> None:
    assert model.companion_due(None, 1) and model.companion_due(True, 1) and not model.companion_due(True, 5)
    strict = {"spec": {"template": {"spec": {"topologySpreadConstraints": [
        {"topologyKey": "example.com/rack", "whenUnsatisfiable": "ScheduleAnyway"},
        {"topologyKey": keys.TOPOLOGY_HOSTNAME, "whenUnsatisfiable": "DoNotSchedule"}]}}}}
    stored = [model.StoredObject({keys.LABEL_CONSIDER: "true"}, "Deployment", strict),
              model.StoredObject({keys.LABEL_CONSIDER: "True"}, "Deployment", strict),
              model.StoredObject({keys.LABEL_CONSIDER: "true"}, "StatefulSet",
                                 {**strict, "metadata": {"labels": {keys.LABEL_SKIP: "false"}}})]
    assert model.companion_targets(stored, 1) == [0]
    assert model.companion_targets(stored, 2) == []


def test_a_failing_example_becomes_a_review_case_that_replays(tmp_path: object) -> None:
    example = differential.Example(request(deployment(1, **{keys.ANNOTATION_REPLICAS: "three"})),
                                   model.Facts(TEAM, nodes=3))
    body = casegen.review_case(example, description="denied")
    assert body is not None and body["steps"] == [{"operation": "CREATE", "expect": {
        "denied": 'strconv.Atoi: parsing "three": invalid syntax', "code": 403}}]
    path = casegen.write(body, tmp_path / "cases")  # type: ignore[operator]
    case = cases.load_case(path)
    assert reference.run_case(case).passed
    broken = reference.Reference(reference.variants.get_variant("bad-replicas-400"))
    assert not simulation.run_case(case, broken).passed


def test_a_generated_scenario_is_written_and_read_back(tmp_path: object) -> None:
    @generated(20)
    @given(generators.scenarios(node_steps=True))
    def check(case: cases.Case) -> None:
        judged, settled = casegen.with_expectations(case)
        assume(settled)
        path = casegen.write(casegen.case_yaml(judged), tmp_path / "scenarios")  # type: ignore[operator]
        assert reference.run_case(cases.load_case(path)).passed

    check()


def test_the_behaviour_defaults_are_the_reference() -> None:
    assert REFERENCE.variant.behaviour == Behaviour()


def test_direct_posts_into_live_worlds_include_a_namespace_that_does_not_exist() -> None:
    """§4 step 1 (errored 500) is asked of the component under test, not only of the model."""
    worlds = [model.Facts(facts.NamespaceInfo(f"hacn-{i}")) for i in range(3)]
    drawn = generators.sample(generators.examples(worlds), 400, seed=1)
    absent = [e for e in drawn if e.facts.namespace is None]
    assert absent and all(e.request.namespace.endswith("-absent") for e in absent)
    assert {e.request.kind for e in absent} >= {"Deployment", "StatefulSet"}
    assert not [e for e in generators.sample(generators.examples(worlds, api_valid=True), 200, seed=1)
                if e.facts.namespace is None]


def _replicas_asked(obj: object) -> list[int]:
    """The replica counts ``obj`` asks for: spec.replicas, an HPA's minReplicas, and its
    replicas annotation when that is a whole number (what a webhook makes spec.replicas)."""
    if not isinstance(obj, dict):
        return []
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    asked = [v for v in (spec.get("replicas"), spec.get("minReplicas")) if isinstance(v, int)]
    annotation = ((obj.get("metadata") or {}).get("annotations") or {}).get(keys.ANNOTATION_REPLICAS)
    if isinstance(annotation, str) and re.fullmatch(r"[+-]?[0-9]+", annotation):
        asked.append(int(annotation))
    return asked


def test_nothing_sent_through_the_api_server_asks_for_many_replicas() -> None:
    """The bed's controller manager makes pods of what the API server stores (a StatefulSet of
    2^31 - 1 replicas took it to 22 GB): no object drawn for the API server asks for more
    than STORED_REPLICAS_MOST, by a field or by the annotation a webhook copies into one."""
    drawn = generators.sample(generators.examples(api_valid=True), 600, seed=1590696506)
    asked = [n for example in drawn for obj in (example.request.obj, example.request.old)
             for n in _replicas_asked(obj)]
    assert len(asked) > 300, "the draws name replicas"
    assert [n for n in asked if abs(n) > generators.STORED_REPLICAS_MOST] == []
