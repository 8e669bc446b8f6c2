"""Generated inputs as data-driven cases (``cases`` format), their expectations from the model.

``review_case`` turns one generated admission request (a direct POST) into a ``via:
review`` case whose one step expects what ``model.admit`` says; ``with_expectations``
runs a case's steps through the model (``simulation.MODEL``: the spec's registration,
the API server's validation, the §11 companion) and fills every step's expectation in.
``to_yaml`` writes either in the format ``cases.load_case`` reads, so that a failing
generated input is a file a vendor replays alone (``conformance/ha_config/README.md``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import yaml

from zoneproof.conformance.ha_config import cases, differential, expectations, model, simulation
from zoneproof.specs.ha_config import configuration, facts
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["CASE_KINDS", "api_case", "case_id", "case_yaml", "expectation_of", "hpa_controller_rescales",
           "rescaled_by_the_hpa_controller", "review_case", "to_yaml", "with_expectations", "write"]

CASE_KINDS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "HorizontalPodAutoscaler": "autoscaling/v2"}
"""The kinds a case holds (cases.load_case checks the apiVersion)."""
_POD = ("spec", "template", "spec")


def _at(obj: JsonValue, *path: str) -> JsonValue:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _fields(kind: str, obj: JsonObject) -> dict[str, JsonValue]:
    """The fields an expectation checks for ``kind`` (normalised; None: absent)."""
    seen = expectations.normalise(obj)
    if kind == "HorizontalPodAutoscaler":
        return {"minReplicas": _at(seen, "spec", "minReplicas"),
                "maxReplicas": _at(seen, "spec", "maxReplicas")}
    return {"replicas": _at(seen, "spec", "replicas"),
            "topologySpreadConstraints": _at(seen, *_POD, "topologySpreadConstraints") or [],
            "affinity": _at(seen, *_POD, "affinity"),
            "tolerations": _at(seen, *_POD, "tolerations") or []}


def _expectation(raw: dict[str, JsonValue]) -> cases.Expectation:
    """An Expectation from the YAML keys (``cases`` spells them as the file does)."""
    def listed(key: str) -> tuple[JsonObject, ...] | cases.Unset:
        value = raw.get(key, cases.UNSET)
        return cases.UNSET if value is cases.UNSET else tuple(value)  # type: ignore[arg-type]

    def number(key: str) -> int | None | cases.Unset:
        value = raw.get(key, cases.UNSET)
        return value if value is None or isinstance(value, int | cases.Unset) else cases.UNSET

    denied = raw.get("denied")
    code = raw.get("code")
    affinity = raw.get("affinity", cases.UNSET)
    return cases.Expectation(
        denied=denied if isinstance(denied, str) else None, code=code if isinstance(code, int) else None,
        untouched=raw.get("untouched") is True, replicas=number("replicas"),
        min_replicas=number("minReplicas"), max_replicas=number("maxReplicas"),
        topology_spread_constraints=listed("topologySpreadConstraints"),
        affinity=affinity if affinity is None or isinstance(affinity, dict | cases.Unset) else cases.UNSET,
        tolerations=listed("tolerations"))


def expectation_of(kind: str, submitted: JsonValue, outcomes: Sequence[model.Outcome]
                   ) -> dict[str, JsonValue]:
    """The expectation (YAML keys) every one of ``outcomes`` meets: the fields they agree on."""
    first = outcomes[0]
    if not first.allowed:
        if any(o.allowed or o.code != first.code for o in outcomes):
            return {}
        message = first.message if first.message is not None else (
            "panic: " if first.code == 500 else "")
        return {"denied": message, "code": first.code} if message else {}
    if any(not o.allowed for o in outcomes):
        return {}
    objects = [o.obj if o.obj is not None else submitted for o in outcomes]
    if not all(isinstance(o, dict) for o in objects):
        return {}
    found = [_fields(kind, o) for o in objects if isinstance(o, dict)]
    agreed = {key: value for key, value in found[0].items() if all(f[key] == value for f in found[1:])}
    if all(expectations.normalise(o) == expectations.normalise(submitted) for o in objects):
        agreed["untouched"] = True
    return agreed


def _namespace(info: facts.NamespaceInfo) -> JsonObject:
    out: JsonObject = {}
    if info.labels:
        out["labels"] = dict(info.labels)
    if info.annotations:
        out["annotations"] = dict(info.annotations)
    return out


def _hpa(hpa: facts.HpaInfo) -> JsonObject:
    return {"name": hpa.name, "scaleTargetRef": {"apiVersion": hpa.target_api_version,
                                                 "kind": hpa.target_kind, "name": hpa.target_name},
            "maxReplicas": hpa.max_replicas}


def _webhook(settings: configuration.TolerationDefaults) -> JsonObject:
    given = {"notReadyTolerationSeconds": settings.not_ready_toleration_seconds,
             "unreachableTolerationSeconds": settings.unreachable_toleration_seconds}
    return {key: seconds for key, seconds in given.items() if seconds is not None}


def _without_namespace(obj: JsonValue) -> JsonObject:
    assert isinstance(obj, dict)
    copied: JsonObject = json.loads(json.dumps(obj))
    meta = copied.get("metadata")
    if isinstance(meta, dict):
        meta.pop("namespace", None)
    return copied


def case_id(prefix: str, content: JsonValue) -> str:
    """``<prefix>-<8 hex of the content>``: the same input gets the same id."""
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:8]
    return f"{prefix}-{digest}"


def review_case(example: differential.Example, *, description: str, prefix: str = "generated"
                ) -> JsonObject | None:
    """A ``via: review`` case (YAML mapping) of one generated request, expecting what the
    model says; None when the case format cannot hold it (no Namespace to create, another
    kind, no object)."""
    request, cluster = example.request, example.facts
    if cluster.namespace is None or request.kind not in CASE_KINDS or not isinstance(request.obj, dict):
        return None
    if request.obj.get("apiVersion") != CASE_KINDS[request.kind]:
        return None
    step: JsonObject = {"operation": request.operation}
    if request.operation == "UPDATE":
        step["oldObject"] = _without_namespace(request.old if isinstance(request.old, dict) else {})
    outcomes = model.admit(request, cluster)
    step["expect"] = expectation_of(request.kind, request.obj, outcomes)
    if not step["expect"]:
        return None
    sections = "§6" if request.kind == "HorizontalPodAutoscaler" else "§5, §7, §8, §9"
    rules = "; ".join(sorted({o.rule for o in outcomes}))
    body: JsonObject = {"description": description, "spec": f"{sections}; {rules}", "via": cases.VIA_REVIEW,
                        "namespace": _namespace(cluster.namespace), "cluster": {"nodes": cluster.nodes}}
    if cluster.hpas:
        body["hpas"] = [_hpa(h) for h in cluster.hpas]
    if webhook := _webhook(cluster.settings):
        body["webhook"] = webhook
    body["object"] = _without_namespace(request.obj)
    body["steps"] = [step]
    return {"id": case_id(prefix, body), **body}


def api_case(example: differential.Example, *, description: str, prefix: str = "generated"
             ) -> cases.Case | None:
    """A case through the API server of one generated request: CREATE, or CREATE the old
    object and UPDATE it to the new one (a merge patch); None when the format cannot hold it.
    Its expectations are still to be filled in (``with_expectations``)."""
    request, cluster = example.request, example.facts
    if cluster.namespace is None or request.kind not in CASE_KINDS or not isinstance(request.obj, dict):
        return None
    first = request.old if request.operation == "UPDATE" and isinstance(request.old, dict) else request.obj
    steps = [cases.Step("CREATE", None, None, cases.Expectation())]
    if first is not request.obj:
        patch = expectations.merge_diff(_without_namespace(first), _without_namespace(request.obj))
        assert isinstance(patch, dict)
        steps.append(cases.Step("UPDATE", patch, None, cases.Expectation()))
    content: JsonObject = {"object": _without_namespace(first), "new": _without_namespace(request.obj),
                           "nodes": cluster.nodes, "namespace": _namespace(cluster.namespace),
                           "hpas": [_hpa(h) for h in cluster.hpas]}
    identifier = case_id(prefix, content)
    namespace = dataclasses.replace(cluster.namespace, name=f"hac-{identifier}", labels={
        k: v for k, v in cluster.namespace.labels.items()
        if k != "kubernetes.io/metadata.name" and not k.startswith("zoneproof.dev/")})
    return cases.Case(identifier, description, "§3–§10 (generated; expectations from the model)",
                      namespace, cases.ClusterShape(cluster.nodes), cluster.hpas, cluster.settings,
                      _without_namespace(first), tuple(steps), Path(f"{identifier}.yaml"))


def hpa_controller_rescales(kind: str, name: str, stored: JsonObject | None,
                            hpas: Sequence[facts.HpaInfo]) -> facts.HpaInfo | None:
    """The HPA whose range the stored object ``name``'s replicas lie outside, so that a real
    cluster's HPA controller rescales it through ``/scale`` (None: none). It clamps a
    target's non-zero ``spec.replicas`` into [minReplicas, maxReplicas] whatever the metrics,
    at some moment of its sync period (15 s by default); it finds the target by API group,
    kind and name (not version). The webhook is never called for it (spec §3, "Subresources
    are not matched": "the HPA controller itself never calls the webhook"), so no model of
    the webhook says when the object changes: such a step has no single expected outcome.
    minReplicas is the API server's default 1 (cases write none; §6 raises it only for an
    HPA with the type label, which cases' HPAs lack)."""
    if stored is None:
        return None
    spec = stored.get("spec")
    replicas = spec.get("replicas", 1) if isinstance(spec, dict) else 1
    if not isinstance(replicas, int) or replicas == 0:
        return None  # 0 with minReplicas 1: "scaling is disabled" for the HPA controller
    return next((h for h in hpas if h.target_kind == kind and h.target_name == name
                 and h.target_api_version.split("/")[0] == "apps"
                 and not 1 <= replicas <= h.max_replicas), None)


def _hpas_after(hpas: tuple[facts.HpaInfo, ...], step: cases.Step) -> tuple[facts.HpaInfo, ...]:
    """The case's HPAs once ``step`` is done (an HPA deleted, or created or replaced)."""
    gone = {step.delete_hpa, step.put_hpa.name if step.put_hpa else None}
    kept = tuple(h for h in hpas if h.name not in gone)
    return (*kept, step.put_hpa) if step.put_hpa is not None else kept


def rescaled_by_the_hpa_controller(case: cases.Case) -> str | None:
    """Why a real cluster's HPA controller could change ``case``'s object before a step reads
    it (``hpa_controller_rescales`` after some step, as the model runs it, and the object
    read again: by that step if it changes a fact, by any later step); None: it never could.
    Such a case judges the webhook only where no HPA controller runs (the in-process
    simulation); through a real API server its outcome depends on when the HPA controller
    syncs, which no spec of the webhook says. (A CREATE or UPDATE is judged on the API
    server's answer itself: no controller comes in between.)"""
    hpas = case.hpas
    result = simulation.run_case(case, simulation.MODEL)
    for index, (step, ran) in enumerate(zip(case.steps, result.steps, strict=True)):
        hpas = _hpas_after(hpas, step)
        read_again = step.operation is None or index + 1 < len(case.steps)
        if read_again and (hpa := hpa_controller_rescales(case.kind, case.name, ran.stored, hpas)):
            return (f"steps[{index}] {step.action}: the HPA {hpa.name} (maxReplicas "
                    f"{hpa.max_replicas}) targets the object, whose replicas lie outside its range")
    return None


def with_expectations(case: cases.Case) -> tuple[cases.Case, bool]:
    """``case`` with every step's expectation from the model's run; False when the case
    cannot judge a component: the spec leaves some step's answer open (several allowed
    outcomes), or a step after the CREATE finds nothing stored (the CREATE was refused)."""
    result = simulation.run_case(case, simulation.MODEL)
    steps = []
    settled = True
    stored_before = False
    for step, ran in zip(case.steps, result.steps, strict=True):
        settled &= ran.reply is None or ran.reply.alternatives == 1
        settled &= stored_before or step.operation == "CREATE"
        stored_before |= ran.stored is not None
        if ran.denial is not None:
            raw: dict[str, JsonValue] = {"denied": ran.denial, "code": ran.code}
        elif ran.stored is None:
            settled = False
            raw = {}
        else:
            raw = dict(_fields(case.kind, ran.stored))
            if ran.submitted is not None and expectations.normalise(ran.stored) == \
                    expectations.normalise(ran.submitted):
                raw["untouched"] = True
        steps.append(dataclasses.replace(step, expect=_expectation(raw)))
    return dataclasses.replace(case, steps=tuple(steps)), settled


def _expect_yaml(expect: cases.Expectation) -> JsonObject:
    out: JsonObject = {}
    if expect.denied is not None:
        out["denied"] = expect.denied
        if expect.code is not None:
            out["code"] = expect.code
        return out
    if expect.untouched:
        out["untouched"] = True
    for key, value in (("replicas", expect.replicas), ("minReplicas", expect.min_replicas),
                       ("maxReplicas", expect.max_replicas), ("affinity", expect.affinity)):
        if value is not cases.UNSET:
            out[key] = value
    for key, listed in (("topologySpreadConstraints", expect.topology_spread_constraints),
                        ("tolerations", expect.tolerations)):
        if not isinstance(listed, cases.Unset):
            out[key] = list(listed)
    return out


def _step_yaml(step: cases.Step) -> JsonObject:
    out: JsonObject = {}
    if step.operation is not None:
        out["operation"] = step.operation
        if step.patch is not None:
            out["patch"] = step.patch
        if step.old_object is not None:
            out["oldObject"] = step.old_object
    elif step.delete_hpa is not None:
        out["delete_hpa"] = step.delete_hpa
    elif step.put_hpa is not None:
        out["put_hpa"] = _hpa(step.put_hpa)
    elif step.annotate is not None:
        out["annotate_namespace"] = dict(step.annotate)
    else:
        out["nodes"] = step.nodes
        if step.restart:
            out["restart"] = True
    expect = _expect_yaml(step.expect)
    if expect:
        out["expect"] = expect
    return out


def case_yaml(case: cases.Case) -> JsonObject:
    """``case`` as the mapping its file holds."""
    body: JsonObject = {"id": case.id, "description": case.description, "spec": case.spec}
    if case.direct:
        body["via"] = cases.VIA_REVIEW
    body["namespace"] = _namespace(case.namespace)
    cluster: JsonObject = {"nodes": case.cluster.nodes}
    if case.cluster.zones:
        cluster["zones"] = list(case.cluster.zones)
    body["cluster"] = cluster
    if case.hpas:
        body["hpas"] = [_hpa(h) for h in case.hpas]
    if webhook := _webhook(case.settings):
        body["webhook"] = webhook
    body["object"] = case.object
    body["steps"] = [_step_yaml(s) for s in case.steps]
    return body


def to_yaml(body: JsonObject) -> str:
    """The case file's text."""
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=110)


def write(body: JsonObject, directory: Path) -> Path:
    """Write the case file ``<id>.yaml`` into ``directory``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{body['id']}.yaml"
    path.write_text(to_yaml(body))
    return path
