"""AdmissionReview decoding/encoding, and the property: any body → a valid review or a 4xx."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zoneproof.components.reference.ha_config import mutation, patches, review
from zoneproof.components.reference.ha_config.variants import Behaviour
from zoneproof.specs.ha_config import facts, keys

CLUSTER = facts.StaticFacts(namespaces={"team": facts.NamespaceInfo("team", {}, {
    keys.ANNOTATION_FAILURE_TOLERANCE_TYPE: "zone", keys.ANNOTATION_ZONES: "a,b"})})


def body(request: Any, api_version: str = "admission.k8s.io/v1") -> bytes:
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview", "request": request}).encode()


def deployment(replicas: Any = 1) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "app", "labels": {keys.LABEL_TYPE: "server"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}}}


_DEFAULT = object()


def request(obj: Any = _DEFAULT, **overrides: Any) -> dict[str, Any]:
    base = {"uid": "abc-123", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "namespace": "team", "name": "app", "operation": "CREATE",
            "object": deployment() if obj is _DEFAULT else obj}
    return {**base, **overrides}


def answer(raw: bytes) -> review.Answer:
    return review.answer_review(raw, CLUSTER, settings=mutation.TolerationDefaults(), behaviour=Behaviour())


def assert_valid_review(result: review.Answer, api_version: str | None = None) -> dict[str, Any]:
    """A well-formed AdmissionReview response (what the API server accepts)."""
    assert result.status == 200 and result.content_type == "application/json"
    doc = json.loads(result.body)
    assert doc["kind"] == "AdmissionReview"
    assert doc["apiVersion"] in review.API_VERSIONS
    if api_version:
        assert doc["apiVersion"] == api_version
    response = doc["response"]
    assert isinstance(response["uid"], str) and response["uid"]
    assert isinstance(response["allowed"], bool)
    assert isinstance(response["status"]["code"], int)
    assert ("patch" in response) == ("patchType" in response)
    if "patch" in response:
        assert response["allowed"] and response["patchType"] == "JSONPatch"
        ops = json.loads(base64.b64decode(response["patch"]))
        assert ops and all(op["op"] in ("add", "remove", "replace") for op in ops)
    return dict(response)


@pytest.mark.parametrize("api_version", review.API_VERSIONS)
def test_answers_in_the_request_version_with_a_base64_json_patch(api_version: str) -> None:
    result = answer(body(request(), api_version))
    response = assert_valid_review(result, api_version)
    assert response["uid"] == "abc-123" and response["allowed"] is True
    assert response["status"] == {"code": 200}
    ops = json.loads(base64.b64decode(response["patch"]))
    patched: Any = patches.apply(deployment(), ops)
    assert patched["spec"]["replicas"] == 2


def test_denial_carries_status_403_forbidden() -> None:
    obj = deployment()
    obj["metadata"]["annotations"] = {keys.ANNOTATION_REPLICAS: "three"}
    response = assert_valid_review(answer(body(request(obj))))
    assert response["allowed"] is False
    assert response["status"] == {"code": 403, "reason": "Forbidden",
                                  "message": 'strconv.Atoi: parsing "three": invalid syntax'}


def test_unknown_namespace_errors_500() -> None:
    response = assert_valid_review(answer(body(request(namespace="nope"))))
    assert response["status"] == {"code": 500, "message": 'namespaces "nope" not found'}


def test_unexpected_kind_is_allowed_with_message() -> None:
    response = assert_valid_review(answer(body(request(kind={"group": "", "version": "v1", "kind": "Pod"}))))
    assert response["allowed"] is True
    assert response["status"] == {"code": 200, "message": "unexpected resource: Pod"}


@pytest.mark.parametrize(("raw", "fragment"), [
    (b"", "not valid JSON"),
    (b"{", "not valid JSON"),
    (b"\xff\xfe\x00", "not valid JSON"),
    (b'{"apiVersion": NaN}', "NaN is not a JSON value"),
    (b"[]", "must be a JSON object"),
    (json.dumps({"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview", "request": {}}).encode(),
     "apiVersion in"),
    (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "Review"}).encode(), "kind AdmissionReview"),
    (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode(), "no request"),
    (body(request(uid="")), "uid"),
    (body(request(uid=7)), "uid"),
    (body(request(kind="Deployment")), "request.kind must be an object"),
    (body(request(kind={"group": 1, "version": "v1", "kind": "Deployment"})), "request.kind.group"),
    (body(request(namespace=["x"])), "request.namespace"),
    (b"[" * 100_000, "not valid JSON"),
    (body({"uid": "u", "kind": {}, "object": json.loads("[" * 200 + "]" * 200)}), "nests deeper"),
])
def test_malformed_envelopes_get_400(raw: bytes, fragment: str) -> None:
    result = answer(raw)
    assert result.status == 400 and result.content_type.startswith("text/plain")
    assert fragment in result.body.decode()


def test_handler_crash_becomes_errored_500_review(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any, **__: Any) -> mutation.Admission:
        raise KeyError("boom")
    monkeypatch.setattr(mutation, "admit", boom)
    response = assert_valid_review(answer(body(request())))
    assert response["status"] == {"code": 500, "message": "panic: 'boom' [recovered]"}


# Property tests ------------------------------------------------------------------------------------

json_leaf = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
             | st.text(max_size=8))
json_any = st.recursive(
    json_leaf, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c, max_size=4),
    max_leaves=25)
label_maps = st.dictionaries(st.sampled_from([keys.LABEL_TYPE, keys.LABEL_SKIP, "app", ""]),
                             st.sampled_from(["server", "controller", "", "x"]) | json_any, max_size=3)
annotation_maps = st.dictionaries(
    st.sampled_from([keys.ANNOTATION_REPLICAS, keys.ANNOTATION_HOST_SPREAD, "other"]),
    st.sampled_from(["3", "0", "-2", "three", " 3", "99999999999999999999", "true", "1"]) | json_any,
    max_size=3)
pod_specs = st.fixed_dictionaries({}, optional={
    "affinity": json_any | st.just({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": keys.TOPOLOGY_ZONE}]}, None]}}}),
    "topologySpreadConstraints": st.lists(json_any | st.just({"topologyKey": keys.TOPOLOGY_HOSTNAME}),
                                          max_size=3),
    "tolerations": st.lists(json_any | st.just({"key": keys.TAINT_NOT_READY}), max_size=3)})
objects = st.fixed_dictionaries({}, optional={
    "metadata": st.fixed_dictionaries({}, optional={"labels": label_maps, "annotations": annotation_maps}),
    "spec": st.fixed_dictionaries({}, optional={
        "replicas": st.integers(-3, 2**32) | json_any, "minReplicas": st.integers(-1, 20) | json_any,
        "maxReplicas": st.integers(-1, 20), "selector": json_any,
        "template": st.fixed_dictionaries({}, optional={
            "metadata": st.fixed_dictionaries({}, optional={"labels": label_maps}),
            "spec": pod_specs})})}) | json_any
kinds = st.sampled_from([("apps", "v1", "Deployment"), ("apps", "v1", "StatefulSet"),
                         ("autoscaling", "v2", "HorizontalPodAutoscaler"), ("autoscaling", "v1",
                                                                           "HorizontalPodAutoscaler"),
                         ("", "v1", "Pod")])
namespace_annotations = st.dictionaries(
    st.sampled_from([keys.ANNOTATION_FAILURE_TOLERANCE_TYPE, keys.ANNOTATION_ZONES,
                     keys.ANNOTATION_ZONE_PINNING]),
    st.sampled_from(["", "zone", "node", "a,b", "true", "b, a,,"]), max_size=3)
namespaces = st.builds(
    lambda a, n: facts.StaticFacts(namespaces={"team": facts.NamespaceInfo("team", {}, a)}, nodes=n),
    namespace_annotations, st.integers(0, 3))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(kind=kinds, obj=objects, cluster=namespaces, tolerations=st.booleans())
def test_any_request_gets_a_valid_review(kind: tuple[str, str, str], obj: Any, cluster: facts.StaticFacts,
                                         tolerations: bool) -> None:
    group, version, name = kind
    raw = body(request(obj, kind={"group": group, "version": version, "kind": name}))
    settings_ = mutation.TolerationDefaults(60, 90) if tolerations else mutation.TolerationDefaults()
    result = review.answer_review(raw, cluster, settings=settings_, behaviour=Behaviour())
    response = assert_valid_review(result)
    if response["allowed"] and "patch" in response:
        patched = patches.apply(obj, json.loads(base64.b64decode(response["patch"])))
        again = review.answer_review(body(request(patched, kind={"group": group, "version": version,
                                                                  "kind": name})),
                                     cluster, settings=settings_, behaviour=Behaviour())
        assert "patch" not in assert_valid_review(again), "the mutation is idempotent"


@settings(max_examples=300)
@given(st.binary(max_size=200) | json_any.map(lambda v: json.dumps(v).encode())
       | st.fixed_dictionaries({"apiVersion": st.sampled_from([*review.API_VERSIONS, "v1", 3]),
                                "kind": st.sampled_from(["AdmissionReview", "x"]),
                                "request": json_any}).map(lambda v: json.dumps(v).encode()))
def test_any_body_gets_a_valid_review_or_a_400(raw: bytes) -> None:
    result = answer(raw)
    if result.status == 400:
        assert result.body.strip()
    else:
        assert_valid_review(result)


def test_old_object_is_parsed_but_the_reference_ignores_it() -> None:
    old = deployment(replicas=2)
    _version, parsed = review.parse_review(body(request(deployment(5), operation="UPDATE",
                                                        oldObject=old)))
    assert parsed.old == old
    response = assert_valid_review(answer(body(request(deployment(5), operation="UPDATE",
                                                       oldObject=old))))
    patched: Any = patches.apply(deployment(5), json.loads(base64.b64decode(response["patch"])))
    assert patched["spec"]["replicas"] == 2


def test_broken_envelope_variants() -> None:
    v1beta1 = review.answer_review(body(request()), CLUSTER, settings=mutation.TolerationDefaults(),
                                   behaviour=Behaviour(answer_version="admission.k8s.io/v1beta1"))
    assert json.loads(v1beta1.body)["apiVersion"] == "admission.k8s.io/v1beta1"
    obj = deployment()
    obj["metadata"]["annotations"] = {keys.ANNOTATION_REPLICAS: "x"}
    bad_request = review.answer_review(body(request(obj)), CLUSTER, settings=mutation.TolerationDefaults(),
                                       behaviour=Behaviour(bad_replicas_code=400))
    assert json.loads(bad_request.body)["response"]["status"]["code"] == 400
