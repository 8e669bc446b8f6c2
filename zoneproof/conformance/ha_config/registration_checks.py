"""Judging a MutatingWebhookConfiguration as the API server stored it against spec §3.

A vendor registers their webhook with their own configuration; each ``Check`` judges one
field of it on every webhook entry (``rules`` judges the entries together: what they route
between them). A field the API server defaults is read with its default when absent, so a
rendered configuration and a stored one are judged alike. ``clientConfig`` is not judged:
the suite fills it in (``specs.ha_config.registration.adopt``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zoneproof.specs.ha_config import keys

__all__ = ["CHECKS", "Check", "judge", "routes"]

Entry = Mapping[str, Any]
Route = tuple[str, str, str, str]
"""(apiGroup, apiVersion, resource, operation)."""
SPEC_ROUTES: frozenset[Route] = frozenset(
    (group, version, resource, operation)
    for group, version, resource in (("apps", "v1", "deployments"), ("apps", "v1", "statefulsets"),
                                     ("autoscaling", "v2", "horizontalpodautoscalers"))
    for operation in ("CREATE", "UPDATE"))
_DEFAULTS = {"failurePolicy": "Fail", "matchPolicy": "Equivalent", "timeoutSeconds": 10,
             "reinvocationPolicy": "Never"}
Requirement = tuple[str, str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Check:
    """One rule of spec §3; ``judge`` says what is wrong with a configuration (empty: conforms)."""

    name: str
    spec: str
    judge: Callable[[Mapping[str, Any]], list[str]]


def _entries(configuration: Mapping[str, Any]) -> list[Entry]:
    found = configuration.get("webhooks") or []
    return [e for e in found if isinstance(e, Mapping)]


def routes(entry: Entry) -> list[Route]:
    """What an entry's rules match, one route per group/version/resource/operation ('*' kept)."""
    out: list[Route] = []
    for rule in entry.get("rules") or []:
        out += [(g, v, r, o) for g in rule.get("apiGroups") or [] for v in rule.get("apiVersions") or []
                for r in rule.get("resources") or [] for o in rule.get("operations") or []]
    return out


def _rules(configuration: Mapping[str, Any]) -> list[str]:
    entries = _entries(configuration)
    counted = Counter(route for entry in entries for route in routes(entry))
    observed = set(counted)
    problems = []
    if missing := sorted(SPEC_ROUTES - observed):
        problems.append(f"not routed: {_shown(missing)}")
    if extra := sorted(observed - SPEC_ROUTES):
        problems.append(f"routed beyond the spec (subresources, other resources, versions or "
                        f"operations, or '*'): {_shown(extra)}")
    if twice := sorted(r for r, n in counted.items() if n > 1):
        problems.append(f"routed by more than one entry: {_shown(twice)}")
    scopes = {str(rule.get("scope", "*")) for e in entries for rule in e.get("rules") or []}
    if bad := sorted(scopes - {"*", "Namespaced"}):
        problems.append(f"rule scope {', '.join(bad)} never matches the namespaced resources")
    if problems:
        problems.append("expected CREATE and UPDATE of apps/v1 deployments and statefulsets and "
                        "autoscaling/v2 horizontalpodautoscalers, nothing else")
    return problems


def _shown(found: Iterable[Route]) -> str:
    return ", ".join(f"{o} {g or 'core'}/{v} {r}" for g, v, r, o in found)


def _requirements(selector: Mapping[str, Any] | None) -> frozenset[Requirement]:
    """A label selector as a set of requirements (matchLabels k: v is ``k In [v]``)."""
    selector = selector or {}
    found = {(str(k), "In", (str(v),)) for k, v in (selector.get("matchLabels") or {}).items()}
    found |= {(str(e.get("key")), str(e.get("operator")), tuple(sorted(e.get("values") or [])))
              for e in selector.get("matchExpressions") or []}
    return frozenset(found)


def _selector_check(field: str, expected: frozenset[Requirement], wanted: str
                    ) -> Callable[[Mapping[str, Any]], list[str]]:
    def judge(configuration: Mapping[str, Any]) -> list[str]:
        return [f"webhook {entry.get('name')!r}: {field} {dict(entry.get(field) or {})!r} selects "
                f"otherwise than {wanted}"
                for entry in _entries(configuration) if _requirements(entry.get(field)) != expected]
    return judge


def _field_check(field: str, expected: object, *, as_set: bool = False
                 ) -> Callable[[Mapping[str, Any]], list[str]]:
    def same(value: object) -> bool:
        if as_set and isinstance(value, list) and isinstance(expected, list):
            return set(map(str, value)) == set(map(str, expected))
        return value == expected

    def judge(configuration: Mapping[str, Any]) -> list[str]:
        problems = []
        for entry in _entries(configuration):
            value = entry.get(field, _DEFAULTS.get(field))
            if not same(value):
                problems.append(f"webhook {entry.get('name')!r}: {field} is {value!r}, the spec "
                                f"registers {expected!r}")
        return problems
    return judge


def _not_empty(configuration: Mapping[str, Any]) -> list[str]:
    return [] if _entries(configuration) else ["the configuration has no webhook entries"]


CHECKS: tuple[Check, ...] = (
    Check("rules", "§3 rules (CREATE, UPDATE; apps/v1 deployments, statefulsets; autoscaling/v2 "
          "horizontalpodautoscalers; no subresources)",
          lambda c: _not_empty(c) or _rules(c)),
    Check("namespaceSelector", "§3 namespaceSelector (consider=true only)",
          _selector_check("namespaceSelector",
                          frozenset({(keys.LABEL_CONSIDER, "In", ("true",))}),
                          f"{keys.LABEL_CONSIDER}=true")),
    Check("objectSelector", "§3 objectSelector (skip DoesNotExist)",
          _selector_check("objectSelector", frozenset({(keys.LABEL_SKIP, "DoesNotExist", ())}),
                          f"objects without {keys.LABEL_SKIP}")),
    Check("failurePolicy", "§3 failurePolicy Fail", _field_check("failurePolicy", "Fail")),
    Check("matchPolicy", "§3 matchPolicy Equivalent", _field_check("matchPolicy", "Equivalent")),
    Check("sideEffects", "§3 sideEffects None", _field_check("sideEffects", "None")),
    Check("timeoutSeconds", "§3 timeoutSeconds 10", _field_check("timeoutSeconds", 10)),
    Check("admissionReviewVersions", "§3 admissionReviewVersions [v1beta1, v1]; §15",
          _field_check("admissionReviewVersions", ["v1beta1", "v1"], as_set=True)),
    Check("reinvocationPolicy", "§3 reinvocationPolicy unset (Never)",
          _field_check("reinvocationPolicy", "Never")),
)


def judge(configuration: Mapping[str, Any]) -> dict[str, list[str]]:
    """Check name → what is wrong (only failing checks)."""
    return {check.name: found for check in CHECKS if (found := check.judge(configuration))}
