"""The direct-review judge, the modelled validation and the registration checks (pure logic)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from zoneproof.conformance.ha_config import direct, registration_checks, validation
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config import registration as config

V1 = "admission.k8s.io/v1"


def answer(response: dict[str, Any], api_version: str = V1) -> bytes:
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview",
                       "response": {"uid": "u", **response}}).encode()


def patch(ops: list[dict[str, Any]]) -> dict[str, Any]:
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(ops).encode()).decode()}


def test_review_body_is_what_the_api_server_sends() -> None:
    raw = json.loads(direct.review_body(V1, uid="u", kind="StatefulSet", namespace="n", name="db",
                                        operation="UPDATE", obj={"a": 1}, old={"a": 0}))
    assert raw["apiVersion"] == V1 and raw["kind"] == "AdmissionReview"
    request = raw["request"]
    assert request["kind"] == {"group": "apps", "version": "v1", "kind": "StatefulSet"}
    assert request["resource"]["resource"] == "statefulsets"
    assert (request["object"], request["oldObject"]) == ({"a": 1}, {"a": 0})
    assert request["options"]["kind"] == "UpdateOptions"


def test_an_allowed_answer_is_applied_strictly() -> None:
    submitted = {"spec": {"template": {"spec": {}}}}
    add = patch([{"op": "add", "path": "/spec/template/spec/tolerations", "value": []}])
    assert direct.judge_answer(V1, "u", submitted, 200, answer(add)) == direct.Answer(
        {"spec": {"template": {"spec": {"tolerations": []}}}}, None, None, ())
    replace = patch([{"op": "replace", "path": "/spec/template/spec/tolerations", "value": []}])
    judged = direct.judge_answer(V1, "u", submitted, 200, answer(replace))
    assert judged.stored is None
    assert "does not apply to the submitted object under RFC 6902" in judged.failures[0]
    assert "add, never replace" in judged.failures[0]
    unchanged = direct.judge_answer(V1, "u", submitted, 200, answer({"allowed": True}))
    assert unchanged.stored == submitted and not unchanged.failures


def test_a_denial_carries_message_and_code() -> None:
    denied = answer({"allowed": False, "status": {"code": 403, "message": "no"}})
    assert direct.judge_answer(V1, "u", {}, 200, denied) == direct.Answer(None, "no", 403, ())


@pytest.mark.parametrize(("status", "body", "fragment"), [
    (500, b"boom", "HTTP 500 (expected 200"),
    (200, b"[]", "no AdmissionReview with a response"),
    (200, answer({"allowed": True}, "admission.k8s.io/v1beta1"), "answer in the version asked"),
    (200, json.dumps({"apiVersion": V1, "kind": "AdmissionReview",
                      "response": {"uid": "x", "allowed": True}}).encode(), "does not echo"),
    (200, answer({"allowed": "yes"}), "not a boolean"),
    (200, answer({"allowed": True, "patchType": "JSONPatch"}), "without a patch"),
    (200, answer({"allowed": True, "patch": "e30=", "patchType": "Merge"}), "expected JSONPatch"),
    (200, answer({"allowed": True, "patch": "!!", "patchType": "JSONPatch"}), "not base64"),
    (200, answer(patch({"op": "add"})), "not a JSON Patch"),  # type: ignore[arg-type]
])
def test_bad_answers_say_what_is_wrong(status: int, body: bytes, fragment: str) -> None:
    judged = direct.judge_answer(V1, "u", {}, status, body)
    assert any(fragment in f for f in judged.failures), judged.failures


def deployment(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "app"}, "spec": spec}


def affinity(values: list[str]) -> dict[str, Any]:
    return {"template": {"spec": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "k", "operator": "In", "values": values}]}]}}}}}}


def test_validation_model_words_refusals_like_the_api_server() -> None:
    terms = ("spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
             "Execution.nodeSelectorTerms[0].matchExpressions[0].values")
    assert validation.refusal("Deployment", deployment(**affinity([" a", "b"]))) == (
        f'Deployment.apps "app" is invalid: {terms}[0]: Invalid value: " a": a valid label must be '
        "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
        "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    assert validation.refusal("StatefulSet", deployment(**affinity([]))) == (
        f'StatefulSet.apps "app" is invalid: {terms}: Required value: must be specified when '
        "`operator` is 'In' or 'NotIn'")
    assert validation.refusal("Deployment", deployment(replicas=-1)) == (
        'Deployment.apps "app" is invalid: spec.replicas: Invalid value: -1: must be greater than '
        "or equal to 0")
    assert validation.refusal("HorizontalPodAutoscaler", deployment(minReplicas=3, maxReplicas=2)) == (
        'HorizontalPodAutoscaler.autoscaling "app" is invalid: spec.maxReplicas: Invalid value: 2: '
        "must be greater than or equal to `minReplicas`")
    assert validation.refusal("HorizontalPodAutoscaler", deployment(minReplicas=12, maxReplicas=-1)) == (
        'HorizontalPodAutoscaler.autoscaling "app" is invalid: [spec.maxReplicas: Invalid value: -1: '
        "must be greater than or equal to `minReplicas`, spec.maxReplicas: Invalid value: -1: must be "
        "greater than or equal to 1]")  # as kube-apiserver 1.37.2 answered it in a CI run
    assert validation.refusal("HorizontalPodAutoscaler", deployment(maxReplicas=0)) == (
        'HorizontalPodAutoscaler.autoscaling "app" is invalid: [spec.maxReplicas: Invalid value: 0: '
        "must be greater than or equal to `minReplicas`, spec.maxReplicas: Required value]")
    assert validation.refusal("Deployment", deployment(replicas=2, **affinity(["z" * 64]))) == (
        f'Deployment.apps "app" is invalid: {terms}[0]: Invalid value: "{"z" * 64}": must be no more '
        "than 63 bytes")
    assert validation.refusal("Deployment", deployment(replicas=2, **affinity(["z1"]))) is None
    both = validation.refusal("Deployment", deployment(replicas=-1, **affinity([])))
    assert both is not None and both.count("Invalid value") + both.count("Required value") == 2


CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def stored_form() -> dict[str, Any]:
    """The spec's configuration as the API server stores it (defaults filled in)."""
    rendered: Any = config.render_webhook_configuration(ca_bundle=CA, url="https://x")
    for webhook in rendered["webhooks"]:
        webhook["reinvocationPolicy"] = "Never"
        for rule in webhook["rules"]:
            rule["scope"] = "*"
    return dict(rendered)


def test_the_stored_spec_configuration_passes_every_check() -> None:
    assert registration_checks.judge(stored_form()) == {}


@pytest.mark.parametrize(("change", "failing"), [
    (lambda w: w.pop("timeoutSeconds"), set()),  # the API default is the spec's 10
    (lambda w: w.update(admissionReviewVersions=["v1", "v1beta1"]), set()),
    (lambda w: w.update(namespaceSelector={"matchExpressions": [
        {"key": keys.LABEL_CONSIDER, "operator": "In", "values": ["true"]}]}), set()),
    (lambda w: w["namespaceSelector"]["matchLabels"].update(extra="x"), {"namespaceSelector"}),
    (lambda w: w.update(objectSelector={}), {"objectSelector"}),
    (lambda w: w["rules"][0].update(scope="Cluster"), {"rules"}),
    (lambda w: w["rules"][0]["operations"].append("DELETE"), {"rules"}),
    (lambda w: w["rules"][1].update(apiVersions=["v1", "v2"]), {"rules"}),
    (lambda w: w.update(failurePolicy="Ignore"), {"failurePolicy"}),
    (lambda w: w.update(timeoutSeconds=5), {"timeoutSeconds"}),
])
def test_each_check_judges_its_field(change: Any, failing: set[str]) -> None:
    stored = stored_form()
    change(stored["webhooks"][0])
    assert set(registration_checks.judge(stored)) == failing


def test_rules_are_judged_across_entries() -> None:
    stored = stored_form()
    stored["webhooks"].append(dict(stored["webhooks"][0], name="twice.example.com"))
    assert registration_checks.judge(stored)["rules"][0].startswith("routed by more than one entry")
    assert registration_checks.judge({"webhooks": []}) == {
        "rules": ["the configuration has no webhook entries"]}
    assert [c.name for c in registration_checks.CHECKS] == [
        "rules", "namespaceSelector", "objectSelector", "failurePolicy", "matchPolicy",
        "sideEffects", "timeoutSeconds", "admissionReviewVersions", "reinvocationPolicy"]
