"""AdmissionReview in, AdmissionReview out: body bytes → ``Answer`` (HTTP status + body).

Malformed envelopes (bad JSON, wrong apiVersion/kind, no request, bad field types) get a
4xx with a plain-text reason; everything else gets an AdmissionReview (``admission.k8s.io``
v1 or v1beta1, answered in the request's version) built by ``mutation.admit``.
"""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass

from zoneproof.components.reference.ha_config import mutation
from zoneproof.components.reference.ha_config.variants import Behaviour
from zoneproof.specs.ha_config import facts
from zoneproof.specs.ha_config.payloads import (
    AdmissionResponse,
    AdmissionReviewOut,
    JsonObject,
    JsonValue,
    Status,
)

__all__ = ["API_VERSIONS", "MAX_DEPTH", "Answer", "ReviewError", "answer_review", "parse_review"]

log = logging.getLogger(__name__)

API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
MAX_DEPTH = 128
"""Deeper JSON is refused (400): built-in objects reach webhooks re-serialised, never this deep."""


class ReviewError(ValueError):
    """The body is not an acceptable AdmissionReview; answered with HTTP 400."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What to send back, plus the fields of the structured log line."""

    status: int
    body: bytes
    content_type: str
    request: mutation.Request | None = None
    verdict: mutation.Admission | None = None


def _reject_constant(name: str) -> JsonValue:
    raise ReviewError(f"request body is not valid JSON: {name} is not a JSON value")


def _too_deep(value: JsonValue) -> bool:
    """True if some value sits deeper than MAX_DEPTH (the root is at depth 1): one pass per level."""
    containers = [value] if isinstance(value, dict | list) else []
    for _depth in range(1, MAX_DEPTH):  # containers holds those at depth _depth
        children = [child for node in containers
                    for child in (node.values() if isinstance(node, dict) else node)]
        containers = [child for child in children if isinstance(child, dict | list)]
        if not containers:
            return False
    return any(containers)


def _string(obj: JsonObject, key: str, where: str) -> str:
    value = obj.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ReviewError(f"{where}.{key} must be a string, got {type(value).__name__}")
    return value


def parse_review(body: bytes) -> tuple[str, mutation.Request]:
    """(apiVersion, request) of an AdmissionReview body; ReviewError says what is wrong."""
    try:
        review: JsonValue = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, ReviewError):
            raise
        raise ReviewError(f"request body is not valid JSON: {exc}") from None
    if not isinstance(review, dict):
        raise ReviewError("request body must be a JSON object (an AdmissionReview)")
    # fewer brackets than MAX_DEPTH cannot nest that deep: the walk is for the rare rest
    if body.count(b"{") + body.count(b"[") >= MAX_DEPTH and _too_deep(review):
        raise ReviewError(f"request body nests deeper than {MAX_DEPTH} levels")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    if kind != "AdmissionReview" or api_version not in API_VERSIONS:
        raise ReviewError(f"expected kind AdmissionReview with apiVersion in {', '.join(API_VERSIONS)}, "
                          f"got kind={kind!r} apiVersion={api_version!r}")
    assert isinstance(api_version, str)
    request = review.get("request")
    if not isinstance(request, dict):
        raise ReviewError("AdmissionReview has no request object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError("request.uid must be a non-empty string")
    gvk = request.get("kind")
    if not isinstance(gvk, dict):
        raise ReviewError("request.kind must be an object {group, version, kind}")
    return api_version, mutation.Request(
        uid=uid, group=_string(gvk, "group", "request.kind"), version=_string(gvk, "version", "request.kind"),
        kind=_string(gvk, "kind", "request.kind"), namespace=_string(request, "namespace", "request"),
        name=_string(request, "name", "request"), operation=_string(request, "operation", "request"),
        obj=request.get("object"), old=request.get("oldObject"))


def _response(uid: str, verdict: mutation.Admission) -> AdmissionResponse:
    status: Status = {"code": verdict.code}
    if verdict.reason:
        status["reason"] = verdict.reason
    if verdict.message:
        status["message"] = verdict.message
    response: AdmissionResponse = {"uid": uid, "allowed": verdict.allowed, "status": status}
    if verdict.patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(list(verdict.patch)).encode()).decode()
    return response


def answer_review(body: bytes, cluster: facts.ClusterFacts, *, settings: mutation.TolerationDefaults,
                  behaviour: Behaviour) -> Answer:
    """The answer to one POSTed body: an AdmissionReview (200) or a 400 with the reason."""
    try:
        api_version, request = parse_review(body)
    except ReviewError as exc:
        return Answer(400, f"{exc}\n".encode(), "text/plain; charset=utf-8")
    try:
        verdict = mutation.admit(request, cluster, settings=settings, behaviour=behaviour)
    except Exception as exc:  # the Go handler's recover(): answer 500, never drop the request
        log.exception("handler failed on request %s", request.uid)
        verdict = mutation.Admission(allowed=False, code=500, message=f"panic: {exc} [recovered]")
    review: AdmissionReviewOut = {"apiVersion": behaviour.answer_version or api_version,
                                  "kind": "AdmissionReview",
                                  "response": _response(request.uid, verdict)}
    return Answer(200, json.dumps(review).encode(), "application/json", request, verdict)
