"""Judging a webhook's answer to one admission request against the model (spec §4, §10, §15).

``judge`` checks the answer itself (HTTP 200, an AdmissionReview of the version asked,
``response.uid`` echoed, ``allowed``, ``status.code``/``reason``/``message`` where the
spec fixes them, ``patchType``, a patch that applies strictly under RFC 6902 to the
submitted object, no patch when nothing changes) and then compares the patched object
with the model's as objects, as §15 says: nulls and empty maps dropped, topology spread
constraints and tolerations as unordered collections, everything else (affinity
included) exactly. Each difference names its field, what the model expected and why
(``model.Outcome.notes``), what was observed, and the spec section.

``model_answer`` is the model answering an AdmissionReview as a webhook would (the
judge's own unit tests, and model runs of review cases).
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import jsonpatch

from zoneproof.conformance.ha_config import direct, expectations, model
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["Difference", "Example", "Verdict", "compare_objects", "judge", "model_answer",
           "resubmission", "section_of"]

_POD = ("spec", "template", "spec")
_UNORDERED = ("topologySpreadConstraints", "tolerations")
_SHOWN = 400


@dataclass(frozen=True, slots=True)
class Example:
    """One admission request posted to the webhook and the facts it is judged with."""

    request: model.Request
    facts: model.Facts
    api_version: str = direct.API_VERSIONS[0]
    uid: str = "zoneproof-generated-0"
    served_version: str = ""
    """Through the API server: the apiVersion the object is sent as ("": its own)."""

    def body(self) -> bytes:
        """The AdmissionReview as the API server would send it."""
        request = self.request
        return direct.review_body(
            self.api_version, uid=self.uid, kind=request.kind, namespace=request.namespace,
            name=request.name, operation=request.operation, obj=request.obj, old=request.old,
            resource=(request.group, request.version, _resource(request.kind)))

    def expected(self) -> tuple[model.Outcome, ...]:
        """Every answer the spec allows."""
        return model.admit(self.request, self.facts)


def _resource(kind: str) -> str:
    """The plural resource name of ``kind`` (Kubernetes' lowercase-plural convention)."""
    lower = kind.lower()
    return lower[:-1] + "ies" if lower.endswith("y") else lower + ("es" if lower.endswith("s") else "s")


def resubmission(example: Example, patched: JsonObject, index: int = 1) -> Example:
    """The webhook's own output posted again as an UPDATE (§4: the mutation is idempotent)."""
    request = replace(example.request, operation="UPDATE", obj=copy.deepcopy(patched),
                      old=copy.deepcopy(example.request.obj))
    return replace(example, request=request, uid=f"{example.uid}-again{index}")


@dataclass(frozen=True, slots=True)
class Difference:
    """One way the answer is not what the spec says."""

    field: str
    expected: str
    observed: str
    spec: str
    why: str = ""

    def shown(self) -> str:
        """One paragraph: the field, the section, expected (and why) and observed."""
        why = f"\n      why: {self.why}" if self.why else ""
        return (f"{self.field} ({self.spec}):\n      expected {self.expected}{why}\n"
                f"      observed {self.observed}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judgement of one answer."""

    differences: tuple[Difference, ...]
    patched: JsonObject | None
    """The submitted object with the answer's patch applied (None: denied or unusable)."""
    allowed: bool | None
    outcome: model.Outcome | None
    """The allowed outcome closest to the answer."""
    submitted: JsonValue = None

    @property
    def passed(self) -> bool:
        """True when the answer is one the spec allows."""
        return not self.differences

    @property
    def changed(self) -> bool:
        """True when the answer changed the object (after normalisation)."""
        return self.patched is not None and \
            expectations.normalise(self.patched) != expectations.normalise(self.submitted)


def _shown(value: JsonValue) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def section_of(path: str) -> str:
    """The spec section that decides the field at ``path`` (dotted)."""
    pod = ".".join(_POD)
    if path == "spec.replicas":
        return "§5"
    if path in ("spec.minReplicas", "spec.maxReplicas"):
        return "§6"
    for name, section in (("affinity", "§7"), ("topologySpreadConstraints", "§8"), ("tolerations", "§9")):
        if path.startswith(f"{pod}.{name}"):
            return section
    return "§4 step 8, §15: the webhook changes nothing else"


def _note(outcome: model.Outcome, path: str) -> str:
    if path in outcome.notes:
        return outcome.notes[path]
    for name in ("affinity", "topologySpreadConstraints", "tolerations"):
        if path.startswith(".".join((*_POD, name))):
            return outcome.notes.get(name, "")
    return ""


def _walk(expected: JsonValue, observed: JsonValue, path: str) -> Iterator[tuple[str, JsonValue, JsonValue]]:
    """(dotted path, expected, observed) of each place the two differ (lists whole)."""
    if isinstance(expected, dict) and isinstance(observed, dict):
        for key in sorted(set(expected) | set(observed)):
            yield from _walk(expected.get(key), observed.get(key), f"{path}.{key}" if path else key)
    elif expected != observed:
        yield path, expected, observed


def _pop_list(obj: JsonValue, name: str) -> list[JsonValue]:
    node = obj
    for key in _POD:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return []
    found = node.pop(name, None)
    return found if isinstance(found, list) else []


def _canonical(item: JsonValue) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def compare_objects(expected: JsonObject, observed: JsonObject, outcome: model.Outcome | None = None
                    ) -> list[Difference]:
    """§15: the differences between the expected and the observed object."""
    wanted, seen = expectations.normalise(expected), expectations.normalise(observed)
    assert isinstance(wanted, dict) and isinstance(seen, dict)
    found: list[Difference] = []
    for name in _UNORDERED:
        path = ".".join((*_POD, name))
        expected_items, observed_items = _pop_list(wanted, name), _pop_list(seen, name)
        missing = Counter(map(_canonical, expected_items)) - Counter(map(_canonical, observed_items))
        extra = Counter(map(_canonical, observed_items)) - Counter(map(_canonical, expected_items))
        if missing or extra:
            found.append(Difference(
                path, f"{_shown(expected_items)} (in any order)",
                f"{_shown(observed_items)}; missing {sorted(missing.elements())}, unexpected "
                f"{sorted(extra.elements())}", section_of(path), _note(outcome, path) if outcome else ""))
    for path, want, got in _walk(wanted, seen, ""):
        found.append(Difference(path, _shown(want), _shown(got), section_of(path),
                                _note(outcome, path) if outcome else ""))
    return found


def _envelope(example: Example, status: int, body: bytes) -> tuple[JsonObject | None, list[Difference]]:
    """The ``response`` of a well-formed answer, and what is wrong with the envelope (§15)."""
    response, failures = direct.parse_answer(example.api_version, example.uid, status, body)
    return response, [Difference("the AdmissionReview answer", "HTTP 200, the version asked, uid echoed, "
                                 "allowed a boolean", failure, "§15 responses") for failure in failures]


def _status_differences(response: JsonObject, outcome: model.Outcome) -> list[Difference]:
    status = response.get("status")
    status = status if isinstance(status, dict) else {}
    found = []
    if outcome.code is not None and status.get("code") != outcome.code:
        found.append(Difference("response.status.code", str(outcome.code), repr(status.get("code")),
                                outcome.rule))
    if outcome.reason is not None and status.get("reason") != outcome.reason:
        found.append(Difference("response.status.reason", outcome.reason, repr(status.get("reason")),
                                outcome.rule))
    message = status.get("message")
    if outcome.message is not None and message != outcome.message:
        found.append(Difference("response.status.message", repr(outcome.message), repr(message),
                                outcome.rule))
    if outcome.message_pattern is not None and not (
            isinstance(message, str) and re.fullmatch(outcome.message_pattern, message, re.DOTALL)):
        found.append(Difference("response.status.message", f"matching /{outcome.message_pattern}/",
                                repr(message), outcome.rule))
    return found


def _patched(response: JsonObject, submitted: JsonValue) -> tuple[JsonObject | None, list[Difference]]:
    """The submitted object with the answer's patch applied strictly (RFC 6902)."""
    rule = "§4 step 8, §10, §15: a JSONPatch (RFC 6902) from the request object"
    patched, problem = direct.apply_patch(response, submitted)
    if problem is None and response.get("patch") is not None and _operations(response) == []:
        return None, [Difference("response.patch", "no patch when nothing changes (§4 step 8)",
                                 "an empty JSON Patch", rule)]
    if problem is not None:
        return None, [Difference("response.patch", "a JSONPatch applying to the submitted object", problem,
                                 rule)]
    return patched, []


def _operations(response: JsonObject) -> JsonValue:
    try:
        ops: JsonValue = json.loads(base64.b64decode(str(response.get("patch"))))
    except ValueError:
        return None
    return ops


def _against(response: JsonObject, outcome: model.Outcome, submitted: JsonValue
             ) -> tuple[JsonObject | None, list[Difference]]:
    """The differences between the answer and one allowed outcome."""
    allowed = response["allowed"]
    if allowed != outcome.allowed:
        expected = "true" if outcome.allowed else f"false ({outcome.code})"
        status = response.get("status")
        message = status.get("message") if isinstance(status, dict) else None
        return None, [Difference("response.allowed", expected, f"{allowed} (message {message!r})",
                                 outcome.rule)]
    found = _status_differences(response, outcome)
    if not outcome.allowed:
        return None, found
    patched, problems = _patched(response, submitted)
    found += problems
    if outcome.obj is None:  # unexpected resource: allowed unchanged
        if response.get("patch") is not None:
            found.append(Difference("response.patch", "none (the object is left alone)", "a patch",
                                    outcome.rule))
        return patched, found
    if patched is None:
        return None, found
    # §15: a patch may hold harmless extra operations (nothing changes after normalisation)
    found += compare_objects(outcome.obj, patched, outcome)
    return patched, found


def judge(example: Example, status: int, body: bytes) -> Verdict:
    """Judge the webhook's answer (HTTP ``status``, ``body``) to ``example``."""
    response, envelope = _envelope(example, status, body)
    if response is None:
        return Verdict(tuple(envelope), None, None, None)
    best: tuple[JsonObject | None, list[Difference], model.Outcome] | None = None
    submitted = json.loads(json.dumps(example.request.obj))  # as sent: no shared sub-objects
    for outcome in example.expected():
        patched, found = _against(response, outcome, submitted)
        if best is None or len(found) < len(best[1]):
            best = (patched, found, outcome)
        if not found:
            break
    assert best is not None
    patched, found, outcome = best
    return Verdict((*envelope, *found), patched, bool(response["allowed"]), outcome, example.request.obj)


def model_answer(body: bytes, cluster: model.Facts) -> tuple[int, bytes]:
    """The model answering an AdmissionReview as a webhook (its first allowed outcome)."""
    review = json.loads(body)
    request = review["request"]
    kind = request["kind"]
    model_request = model.Request(request.get("operation", ""), kind.get("group", ""),
                                  kind.get("version", ""), kind.get("kind", ""),
                                  request.get("namespace", ""), request.get("name", ""),
                                  request.get("object"), request.get("oldObject"))
    outcome = model.admit(model_request, cluster)[0]
    status: JsonObject = {}
    for key, value in (("code", outcome.code), ("reason", outcome.reason), ("message", outcome.message)):
        if value is not None:
            status[key] = value
    if outcome.message is None and outcome.message_pattern is not None:
        status["message"] = "panic: model [recovered]" if outcome.code == 500 else "model: denied"
    response: JsonObject = {"uid": request["uid"], "allowed": outcome.allowed, "status": status}
    if outcome.obj is not None:
        ops: Sequence[JsonValue] = jsonpatch.make_patch(model_request.obj, outcome.obj).patch
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(list(ops)).encode()).decode()
    return 200, json.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
                            "response": response}).encode()
