"""Waiting until the webhook under test reflects the facts an input is judged with.

The webhook reads Namespaces, HPAs and Nodes from watch caches: eventually consistent.
Before an input is judged against facts, the webhook must have seen them:

* a namespace just created (``created``): a probe is answered (while the handler cannot
  read the Namespace it errors, §4 step 1);
* HPAs created, changed or deleted (``hpas_changed``): a sync HPA toggled after them (created
  or deleted, targeting the probe ``SYNC_PROBE``) shows in the probe's answer; a cache is
  fed in order, so the earlier changes are in too;
* a namespace's annotations or the Node count changed (``facts_changed``): the probes whose
  answers the model says differ between the old and the new facts (``PROBES``) answer
  differently from before the change, or as the model says for the new facts; a probe the
  API server refused as invalid before the change and will again after it cannot show it and
  is not waited on (where no probe can, nothing judged through the API server differs).

``wait`` polls until every pending change is reflected or the bound passes; what was never
reflected is returned, to be reported as such, never judged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from zoneproof.conformance.ha_config import model, selection, validation
from zoneproof.specs.ha_config import facts, keys
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["HPA_PROBE", "PROBES", "SYNC_HPA", "SYNC_NAME", "SYNC_PROBE", "Pending", "Post", "answer_of",
           "called", "created", "facts_changed", "hpas_changed", "probe_request", "sees_sync_hpa",
           "unshowable", "wait"]

Post = Callable[[str, JsonObject], JsonValue]
"""Posts a probe (a Deployment or an HPA: CREATE) in a namespace; ``answer_of`` what came back, or None
when the webhook gave no allowed answer (it errored, or could not be reached)."""

SYNC_NAME = "zoneproof-sync"
"""The sync probe Deployment and the sync HPA that targets it."""
SYNC_HPA = facts.HpaInfo(SYNC_NAME, "apps/v1", "Deployment", SYNC_NAME, 5)


def _probe(name: str, replicas: int, labels: Mapping[str, str], annotations: Mapping[str, str]) -> JsonObject:
    pod_labels: JsonObject = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {**labels}, "annotations": {**annotations}},
            "spec": {"replicas": replicas, "paused": True, "selector": {"matchLabels": pod_labels},
                     "template": {"metadata": {"labels": pod_labels}, "spec": {
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}}


SYNC_PROBE = _probe(SYNC_NAME, 5, {keys.LABEL_TYPE: keys.TYPE_SERVER}, {keys.ANNOTATION_HOST_SPREAD: "true"})
"""A server with 5 replicas and host-spread: a webhook seeing the sync HPA (max 5) keeps 5
replicas (§5 step 5) or, on several Nodes, gives the hostname constraint minDomains 3 (§8
maxR); without it, 2 replicas and minDomains 2."""
HPA_PROBE: JsonObject = {
    "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "zp-probe-hpa", "labels": {keys.LABEL_TYPE: keys.TYPE_CONTROLLER},
                 "annotations": {}},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "zp-probe-none"},
             "minReplicas": 1, "maxReplicas": 1}}
"""§6: a controller HPA's min/max tell ftt ``""`` from the others (1, else 2) and get no zone:
it shows that fact where the namespace's zones make every workload's answer invalid for the
API server (pinning with a zone " a": entries are not trimmed, §2, §7)."""
PROBES: tuple[JsonObject, ...] = (
    _probe("zp-probe-spread", 10, {}, {}),
    _probe("zp-probe-controller", 5, {keys.LABEL_TYPE: keys.TYPE_CONTROLLER}, {}),
    _probe("zp-probe-nodes", 2, {}, {keys.ANNOTATION_HOST_SPREAD: "true"}),
    HPA_PROBE,
)
"""Probes that show every namespace fact and the Node count: §7 affinity (zones, pinning),
§8 constraints (ftt, nZones up to 10, several Nodes), §5 replicas (ftt ``""``), §6 HPA
min/max. No HPA targets their names; probes are never stored (dry-run)."""


def probe_request(probe: JsonObject, namespace: str) -> model.Request:
    """The CREATE of ``probe`` in ``namespace``."""
    meta = probe["metadata"]
    assert isinstance(meta, dict)
    group, version = str(probe["apiVersion"]).split("/")
    return model.Request("CREATE", group, version, str(probe["kind"]), namespace, str(meta["name"]),
                         {**probe, "metadata": {**meta, "namespace": namespace}})


def answer_of(obj: JsonObject | None, refusal: str | None = None) -> JsonValue:
    """A probe's answer in comparable form: the mutated object's webhook fields, or the refusal."""
    if obj is None:
        return {"refused": refusal}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    pod = pod if isinstance(pod, dict) else {}
    if obj.get("kind") == "HorizontalPodAutoscaler":
        return {"minReplicas": spec.get("minReplicas"), "maxReplicas": spec.get("maxReplicas")}
    answer: JsonValue = json.loads(json.dumps(
        {"replicas": spec.get("replicas"), "affinity": pod.get("affinity"),
         "tsc": pod.get("topologySpreadConstraints"), "tolerations": pod.get("tolerations")}))
    return answer


def sees_sync_hpa(answer: JsonValue) -> bool:
    """Either sign of the sync HPA in the sync probe's answer (so that a webhook breaking one
    of the two rules still syncs)."""
    if not isinstance(answer, dict):
        return False
    if answer.get("replicas") == 5:
        return True
    constraints = answer.get("tsc")
    listed = constraints if isinstance(constraints, list) else []
    hostname = [c for c in listed if isinstance(c, dict) and c.get("topologyKey") == keys.TOPOLOGY_HOSTNAME]
    return bool(hostname) and hostname[0].get("minDomains") == 3


def _expected(facts_: model.Facts, probe: JsonObject) -> list[JsonValue]:
    namespace = facts_.namespace.name if facts_.namespace else ""
    return [answer_of(o.obj) if o.allowed else {"refused": o.message}
            for o in model.admit(probe_request(probe, namespace), facts_)]


def _invalid(facts_: model.Facts, probe: JsonObject) -> bool:
    """Does the API server refuse as invalid every output the model allows for ``probe`` under
    ``facts_``? A probe answered so before and after a change cannot show it (posted through
    the API server: e.g. pinning to zones " a" then " a,b")."""
    namespace = facts_.namespace.name if facts_.namespace else ""
    request = probe_request(probe, namespace)
    allowed = [o.obj for o in model.admit(request, facts_) if o.allowed]
    return bool(allowed) and all(isinstance(obj, dict) and validation.refusal(request.kind, obj) is not None
                                 for obj in allowed)


@dataclass(slots=True)
class Pending:
    """A change of one namespace's facts the webhook is to reflect."""

    namespace: str
    what: str
    probes: list[JsonObject]
    check: Callable[[JsonObject, JsonValue], bool]
    """Does this answer to this probe show the change?"""
    last: list[str] = field(default_factory=list)
    """The last answers seen (for the report of a change never reflected)."""

    def reflected(self, post: Post) -> bool:
        """True once an answer shows the change."""
        self.last = []
        for probe in self.probes:
            seen = post(self.namespace, probe)
            self.last.append(f"{_name(probe)}: {json.dumps(seen)[:300]}")
            if self.check(probe, seen):
                return True
        return not self.probes

    def report(self, timeout_s: float) -> str:
        """Why this change was not judged."""
        return (f"namespace {self.namespace}: the webhook did not reflect {self.what} within "
                f"{timeout_s:g} s (spec §4 steps 1-4 read the cluster's current facts); last answers: "
                + "; ".join(self.last))


def _name(probe: JsonObject) -> str:
    meta = probe.get("metadata")
    return str(meta.get("name")) if isinstance(meta, dict) else "?"


def called(labels: Mapping[str, str], namespace: str) -> bool:
    """Does the API server call the webhook for a probe in a namespace with ``labels`` (§3)?
    Through the API server nothing shows where it does not: no change needs awaiting there."""
    call = selection.Call("apps", "v1", "deployments", "CREATE", namespace, labels, {})
    return model.selected(call)


def created(namespace: str, *, shows: bool = True) -> Pending:
    """A namespace just created: reflected once the sync probe is answered (``shows``: the
    webhook is asked for it at all)."""
    return Pending(namespace, "the new namespace", [SYNC_PROBE] if shows else [],
                   lambda _probe, seen: seen is not None)


def unshowable(answer: JsonValue) -> bool:
    """The API server refused the webhook's own output for the probe as invalid (e.g. the
    namespace names a zone that is no valid label value, §2: entries are not trimmed, so
    every workload there is refused): no answer in this namespace can show an HPA, and no
    workload step's outcome there depends on one."""
    refused = answer.get("refused") if isinstance(answer, dict) else None
    return isinstance(refused, str) and " is invalid: " in refused


def hpas_changed(namespace: str, sync_present: bool, *, shows: bool = True) -> Pending:
    """HPAs changed, then the sync HPA created (``sync_present``) or deleted last."""
    state = "created" if sync_present else "deleted"
    return Pending(namespace, f"its HPA changes (sync HPA {SYNC_NAME} {state} last)",
                   [SYNC_PROBE] if shows else [],
                   lambda _probe, seen: seen is not None and (
                       sees_sync_hpa(seen) == sync_present or unshowable(seen)))


def _key(probe: JsonObject) -> str:
    """A probe as a dict key (probes are JSON, not hashable)."""
    return json.dumps(probe, sort_keys=True)


def facts_changed(namespace: str, old: model.Facts, new: model.Facts, before: Post, *, what: str,
                  shows: bool = True) -> Pending:
    """The namespace's annotations or the Node count changed from ``old`` to ``new``; call it
    before making the change (``before`` posts the probes the model says tell them apart)."""
    after = {_key(p): _expected(new, p) for p in PROBES} if shows else {}
    candidates = [p for p in PROBES if shows and _expected(old, p) != after[_key(p)]]
    earlier = {_key(p): before(namespace, p) for p in candidates}
    probes = [p for p in candidates if not (unshowable(earlier[_key(p)]) and _invalid(new, p))]

    def check(probe: JsonObject, seen: JsonValue) -> bool:
        if seen is None:
            return False
        return seen != earlier[_key(probe)] or seen in after[_key(probe)]

    return Pending(namespace, what, probes, check)


def wait(pending: Sequence[Pending], post: Post, *, timeout_s: float, interval_s: float = 0.2
         ) -> list[Pending]:
    """Poll until every change is reflected; those still not reflected after ``timeout_s``."""
    left = list(pending)
    deadline = time.monotonic() + timeout_s
    while left:
        left = [p for p in left if not p.reflected(post)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(interval_s)
    return left
