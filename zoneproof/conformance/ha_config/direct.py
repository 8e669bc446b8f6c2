"""Posting AdmissionReviews to the webhook under test itself: what the API server hides.

Through the API server some of the handler's own behaviour never shows: its filtering
(spec §3: the handler does none; selection is the registration's), the exact JSON Patch
it writes (the API server applies ``replace`` on an absent key as if it were ``add``;
RFC 6902 does not), and the AdmissionReview version it answers in (the API server sends
the first version the registration lists). A ``via: review`` case is run here, once per
AdmissionReview version (``API_VERSIONS``): each step becomes a review (plain JSON), the
answer is checked (HTTP 200, the same apiVersion and kind, ``response.uid`` echoed, a
``JSONPatch`` that applies strictly per RFC 6902: the ``jsonpatch`` library, not the
reference's own code) and the patched object judged like any
case's stored object. ``Poster`` sends over HTTPS with the CA that signs the webhook
(urllib3); in-process runs pass the reference's handler as the sender instead.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import jsonpatch
import jsonpointer
import urllib3

from zoneproof.conformance.ha_config import cases, expectations, selection
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["API_VERSIONS", "Answer", "DirectStep", "Poster", "Send", "apply_patch", "judge_answer",
           "parse_answer", "review_body", "run_steps"]

API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
Send = Callable[[bytes], tuple[int, bytes]]
"""Posts one AdmissionReview body; (HTTP status, response body)."""
_BODY_CHARS = 300


def review_body(api_version: str, *, uid: str, kind: str, namespace: str, name: str,
                operation: str, obj: JsonValue, old: JsonValue = None,
                resource: tuple[str, str, str] | None = None) -> bytes:
    """An AdmissionReview request as the API server sends it for ``obj`` (``resource``: group,
    version and resource, given for kinds other than the three the webhook handles)."""
    group, version, plural = resource or selection.RESOURCES[kind]
    gvk: JsonObject = {"group": group, "version": version, "kind": kind}
    gvr: JsonObject = {"group": group, "version": version, "resource": plural}
    request: JsonObject = {
        "uid": uid, "kind": gvk, "resource": gvr, "requestKind": dict(gvk),
        "requestResource": dict(gvr), "name": name, "namespace": namespace,
        "operation": operation, "userInfo": {"username": "zoneproof-direct-review"},
        "object": obj, "oldObject": old, "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1",
                    "kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions"}}
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview",
                       "request": request}).encode()


@dataclass(frozen=True, slots=True)
class Answer:
    """A review's answer: the patched object or the denial, and what is wrong with the answer."""

    stored: JsonObject | None
    denial: str | None
    code: int | None
    failures: tuple[str, ...]


def _shown(body: bytes) -> str:
    return body[:_BODY_CHARS].decode(errors="replace")


def parse_answer(api_version: str, uid: str, status: int, body: bytes) -> tuple[JsonObject | None, list[str]]:
    """The ``response`` of an answer (None: no usable one) and what is wrong with its envelope:
    HTTP 200, an AdmissionReview of the version asked, ``response.uid`` echoed, ``allowed`` a
    boolean (spec §15)."""
    if status != 200:
        return None, [f"HTTP {status} (expected 200 with an AdmissionReview): {_shown(body)}"]
    try:
        review = json.loads(body)
    except ValueError:
        review = None
    response = review.get("response") if isinstance(review, dict) else None
    if not isinstance(review, dict) or not isinstance(response, dict):
        return None, [f"the answer is no AdmissionReview with a response: {_shown(body)}"]
    failures = []
    if (review.get("apiVersion"), review.get("kind")) != (api_version, "AdmissionReview"):
        failures.append(f"a {api_version} review was answered as apiVersion "
                        f"{review.get('apiVersion')!r} kind {review.get('kind')!r}: answer in the "
                        "version asked (spec §15)")
    if response.get("uid") != uid:
        failures.append(f"response.uid {response.get('uid')!r} does not echo request.uid {uid!r}")
    allowed = response.get("allowed")
    if not isinstance(allowed, bool):
        return None, [*failures, f"response.allowed is {allowed!r}, not a boolean"]
    return response, failures


def judge_answer(api_version: str, uid: str, submitted: JsonObject, status: int,
                 body: bytes) -> Answer:
    """Check one answer (spec §10, §15) and apply its patch strictly to ``submitted``."""
    response, failures = parse_answer(api_version, uid, status, body)
    if response is None:
        return Answer(None, None, None, tuple(failures))
    if not response["allowed"]:
        status_of = response.get("status")
        status_of = status_of if isinstance(status_of, dict) else {}
        code = status_of.get("code")
        return Answer(None, str(status_of.get("message", "")),
                      code if isinstance(code, int) else None, tuple(failures))
    patched, problem = apply_patch(response, submitted)
    return Answer(patched, None, None, (*failures, *([problem] if problem else [])))


def apply_patch(response: JsonObject, submitted: JsonValue) -> tuple[JsonObject | None, str | None]:
    """(the submitted object with the answer's patch applied strictly under RFC 6902, None) or
    (None, what is wrong with the patch)."""
    patch, patch_type = response.get("patch"), response.get("patchType")
    if patch is None:
        if patch_type is not None:
            return None, f"patchType {patch_type!r} without a patch"
        return (copy.deepcopy(submitted), None) if isinstance(submitted, dict) else (None, None)
    if patch_type != "JSONPatch":
        return None, f"patchType is {patch_type!r}, expected JSONPatch"
    try:
        ops = json.loads(base64.b64decode(str(patch), validate=True))
    except (binascii.Error, ValueError) as exc:
        return None, f"the patch is not base64 of JSON: {exc}"
    if not isinstance(ops, list):
        return None, f"the patch is not a JSON Patch (a list of operations): {ops!r}"
    try:
        patched = jsonpatch.apply_patch(submitted, ops)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError) as exc:
        return None, (f"the patch does not apply to the submitted object under RFC 6902 ({exc}); "
                      f"a path that may be absent is written with add, never replace: {ops}")
    if not isinstance(patched, dict):
        return None, f"the patch replaced the object by {patched!r}"
    return patched, None


@dataclass(frozen=True, slots=True)
class DirectStep:
    """One step of a review case in one AdmissionReview version."""

    index: int
    api_version: str
    submitted: JsonObject
    stored: JsonObject | None
    denial: str | None
    failures: tuple[str, ...]

    @property
    def action(self) -> str:
        """``CREATE (admission.k8s.io/v1)`` and the like."""
        return f"review {self.api_version.rsplit('/', 1)[-1]}"


def run_steps(case: cases.Case, namespace: str, send: Send, api_version: str) -> list[DirectStep]:
    """Post every step of the review ``case`` in ``api_version``; each step judged."""
    stored: JsonObject | None = None
    results: list[DirectStep] = []
    for index, step in enumerate(case.steps):
        old = step.old_object if step.old_object is not None else \
            stored if step.operation == "UPDATE" else None
        if step.operation == "CREATE" or stored is None:
            submitted = copy.deepcopy(case.object)
        else:
            merged = expectations.merge_patch(stored, step.patch or {})
            assert isinstance(merged, dict)
            submitted = merged
        meta = submitted.setdefault("metadata", {})
        assert isinstance(meta, dict)
        meta["namespace"] = namespace
        uid = str(uuid.uuid4())
        status, body = send(review_body(api_version, uid=uid, kind=case.kind, namespace=namespace,
                                        name=case.name, operation=step.operation or "CREATE",
                                        obj=submitted, old=old))
        answer = judge_answer(api_version, uid, submitted, status, body)
        failures = list(answer.failures)
        if answer.stored is not None or answer.denial is not None:
            failures += expectations.check_expectation(step.expect, kind=case.kind, submitted=submitted,
                                                     stored=answer.stored, denial=answer.denial,
                                                     code=answer.code)
        stored = answer.stored if answer.stored is not None else stored
        results.append(DirectStep(index, api_version, submitted, answer.stored, answer.denial,
                                  tuple(failures)))
    return results


class Poster:
    """POSTs AdmissionReviews to a webhook URL over TLS verified with its CA bundle (PEM)."""

    def __init__(self, url: str, ca_bundle: bytes, *, timeout_s: float = 10.0) -> None:
        self.url = url
        context = ssl.create_default_context(cadata=ca_bundle.decode())
        self._pool = urllib3.PoolManager(ssl_context=context, retries=False,
                                         timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s))

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        """Send one review; (HTTP status, body)."""
        response = self._pool.request("POST", self.url, body=body,
                                      headers={"Content-Type": "application/json"})
        return response.status, response.data

    def close(self) -> None:
        """Close the connections."""
        self._pool.clear()

