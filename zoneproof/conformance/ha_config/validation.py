"""The API server's validation after the webhook, as far as the cases meet it (modelled in-process).

A mutating webhook's output is validated like any write: some spec-conformant outputs are
refused there (spec §10 "malformed values"), and a case through the API server expects
that refusal. ``refusal`` gives the API server's message (its own wording, checked
against kube-apiserver 1.37) for the rules the cases reach, None when the object passes:

* HPA ``spec.maxReplicas`` below ``spec.minReplicas`` (absent: 1), ``minReplicas`` 0 without
  an Object or External metric (hand-written rules), then the declarative ones of 1.37
  (reported after the hand-written ones): ``minReplicas`` negative, ``maxReplicas`` 0 (required)
  or negative;
* required node affinity: ``In``/``NotIn`` without values, values over 63 bytes or not of a
  label value's form (one refusal each);
* a negative ``spec.replicas``.

Live runs need none of this: the real API server answers.
"""

from __future__ import annotations

import re

from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["UNPROCESSABLE", "refusal"]

UNPROCESSABLE = 422
"""The HTTP status of a validation refusal."""
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_HELP = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_GROUPS = {"Deployment": "apps", "StatefulSet": "apps", "HorizontalPodAutoscaler": "autoscaling"}
_TERMS = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution" \
    ".nodeSelectorTerms"


def _at(obj: JsonValue, *path: str) -> JsonValue:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _go_quote(value: str) -> str:
    """The value as Go's %q shows it (enough for label values: printable ASCII and escapes)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _node_affinity_errors(obj: JsonObject) -> list[str]:
    terms = _at(obj, "spec", "template", "spec", "affinity", "nodeAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    found: list[str] = []
    for i, term in enumerate(terms if isinstance(terms, list) else []):
        expressions = _at(term, "matchExpressions")
        for j, expression in enumerate(expressions if isinstance(expressions, list) else []):
            if not isinstance(expression, dict) or expression.get("operator") not in ("In", "NotIn"):
                continue
            where = f"{_TERMS}[{i}].matchExpressions[{j}].values"
            values = expression.get("values")
            values = values if isinstance(values, list) else []
            if not values:
                found.append(f"{where}: Required value: must be specified when `operator` is "
                             "'In' or 'NotIn'")
            for k, value in enumerate(values):
                if not isinstance(value, str):
                    continue
                if len(value.encode()) > 63:
                    found.append(f"{where}[{k}]: Invalid value: {_go_quote(value)}: must be no more "
                                 "than 63 bytes")
                if not _LABEL_VALUE.fullmatch(value):
                    found.append(f"{where}[{k}]: Invalid value: {_go_quote(value)}: "
                                 f"{_LABEL_VALUE_HELP}")
    return found


def _hpa_errors(obj: JsonObject) -> list[str]:
    """autoscaling's hand-written rules first, then its declarative ones (``+k8s:minimum`` on
    both counts, ``+k8s:required`` on maxReplicas), as kube-apiserver 1.37 reports them, with
    HPAScaleToZero on (its default there) and minReplicas defaulted to 1 when absent."""
    low, high = _at(obj, "spec", "minReplicas"), _at(obj, "spec", "maxReplicas")
    low = 1 if low is None else low
    found = []
    if isinstance(low, int) and isinstance(high, int) and high < low:
        found.append(f"spec.maxReplicas: Invalid value: {high}: must be greater than or equal to "
                     "`minReplicas`")
    metrics = _at(obj, "spec", "metrics")
    if low == 0 and not any(isinstance(m, dict) and m.get("type") in ("Object", "External")
                            for m in (metrics if isinstance(metrics, list) else [])):
        found.append("spec.metrics: Forbidden: must specify at least one Object or External metric "
                     "to support scaling to zero replicas")
    if isinstance(low, int) and low < 0:
        found.append(f"spec.minReplicas: Invalid value: {low}: must be greater than or equal to 0")
    if high == 0:
        found.append("spec.maxReplicas: Required value")
    elif isinstance(high, int) and high < 1:
        found.append(f"spec.maxReplicas: Invalid value: {high}: must be greater than or equal to 1")
    return found


def _errors(kind: str, obj: JsonObject) -> list[str]:
    if kind == "HorizontalPodAutoscaler":
        return _hpa_errors(obj)
    found = []
    replicas = _at(obj, "spec", "replicas")
    if isinstance(replicas, int) and replicas < 0:
        found.append(f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
    return found + _node_affinity_errors(obj)


def refusal(kind: str, obj: JsonObject) -> str | None:
    """The API server's refusal of ``obj`` after admission, or None when it validates."""
    found = _errors(kind, obj)
    if not found:
        return None
    name = _at(obj, "metadata", "name")
    listed = found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"
    return f'{kind}.{_GROUPS[kind]} "{name}" is invalid: {listed}'
