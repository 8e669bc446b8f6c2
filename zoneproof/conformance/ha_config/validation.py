"""The API server's validation after the webhook, as far as the cases meet it (modelled in-process).

A mutating webhook's output is validated like any write: some spec-conformant outputs are
refused there (spec §10 "malformed values"), and a case through the API server expects
that refusal. ``refusal`` gives the API server's message (its own wording, checked
against kube-apiserver 1.37) for the rules the cases reach, None when the object passes:

* HPA ``spec.minReplicas`` above ``spec.maxReplicas``;
* required node affinity: ``In``/``NotIn`` without values, values that are no label value;
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
                if isinstance(value, str) and (len(value) > 63 or not _LABEL_VALUE.fullmatch(value)):
                    found.append(f"{where}[{k}]: Invalid value: {_go_quote(value)}: "
                                 f"{_LABEL_VALUE_HELP}")
    return found


def _errors(kind: str, obj: JsonObject) -> list[str]:
    if kind == "HorizontalPodAutoscaler":
        low, high = _at(obj, "spec", "minReplicas"), _at(obj, "spec", "maxReplicas")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            return [f"spec.maxReplicas: Invalid value: {high}: must be greater than or equal to "
                    "`minReplicas`"]
        return []
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
