"""Running conformance cases through a real API server (the live twin of ``simulation``).

``run_case`` creates the case's Namespace (name suffixed, so parallel workers and reruns
never clash), its HPAs and the object, replays the steps (CREATE; UPDATE as a JSON merge
patch; a Node-count change through ``NodeSet``, with ``restart`` while the webhook is
stopped; an HPA deleted, created or replaced; the namespace's annotations changed), reads
what the API server stored (or the refusal it answered with, and its HTTP status) and
judges it with ``expectations.check_expectation``. A review
case (``via: review``) is posted to the webhook itself instead (``run_review_case``,
``direct``), in a namespace made the same way.

Two live facts the in-process model does not have:

* The webhook reads Namespaces and HPAs from watch caches, so before the first write
  ``run_case`` waits until a dry-run probe shows the webhook knows the Namespace (and, with
  HPAs, a sync HPA created last: ``SYNC_NAME``); after each HPA step the sync HPA is toggled
  and awaited, after an annotation step the probes that show the change (``barrier``).
* The API server defaults fields the submission lacks (strategy, restartPolicy, ...), so
  ``untouched`` is judged on what the webhook writes (``WEBHOOK_FIELDS``) and the labels:
  ``baseline`` is the stored object with those fields taken from the submission.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from kubernetes import client

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.conformance.ha_config import barrier, cases, direct, expectations, model, validation
from zoneproof.runs import sweep
from zoneproof.specs.ha_config import configuration, facts, keys
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = [
    "EXTRA_NODE_LABEL",
    "SYNC_NAME",
    "WEBHOOK_FIELDS",
    "LiveResult",
    "LiveStep",
    "NodeSet",
    "Objects",
    "baseline",
    "dry_run_post",
    "hpa_body",
    "review_post",
    "settings_args",
    "delete_namespace",
    "namespace_name",
    "needs_private_bed",
    "run_case",
    "run_review_case",
]

SYNC_NAME = barrier.SYNC_NAME
"""Name of the dry-run probe Deployment and of the sync HPA that targets it."""
EXTRA_NODE_LABEL = "zoneproof.dev/ha-config-extra-node"
"""Label of the Node objects ``NodeSet`` adds (the ones it deletes first)."""
WEBHOOK_FIELDS: tuple[tuple[str, ...], ...] = (
    ("metadata", "labels"),
    ("spec", "replicas"),
    ("spec", "minReplicas"),
    ("spec", "maxReplicas"),
    ("spec", "template", "spec", "affinity"),
    ("spec", "template", "spec", "topologySpreadConstraints"),
    ("spec", "template", "spec", "tolerations"),
)
"""What the webhook may write (spec §5-§9), plus labels; ``untouched`` compares these."""

_TIMEOUT_S = 30.0
_REQUEST_TIMEOUT_S = 30
_MERGE_PATCH = "application/merge-patch+json"
_PATHS = {
    "Deployment": "/apis/apps/v1/namespaces/{namespace}/deployments",
    "StatefulSet": "/apis/apps/v1/namespaces/{namespace}/statefulsets",
    "HorizontalPodAutoscaler": "/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers",
}


@dataclass(frozen=True, slots=True)
class LiveStep:
    """One step as the API server answered it."""

    index: int
    action: str
    """CREATE, UPDATE or ``nodes=N``."""
    submitted: JsonObject | None
    stored: JsonObject | None
    denial: str | None
    failures: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LiveResult:
    """A case applied through the API server."""

    case_id: str
    namespace: str
    steps: tuple[LiveStep, ...]

    @property
    def failures(self) -> list[str]:
        """Every failure, prefixed by its step."""
        return [f"steps[{s.index}] {s.action}: {f}" for s in self.steps for f in s.failures]

    @property
    def passed(self) -> bool:
        """True when every step held."""
        return not self.failures

    def attachments(self) -> list[tuple[str, JsonValue]]:
        """(name, JSON) pairs for a report: what was submitted and stored at each step."""
        out: list[tuple[str, JsonValue]] = []
        for step in self.steps:
            prefix = f"step {step.index} {step.action}"
            if step.submitted is not None:
                out.append((f"{prefix}: submitted", step.submitted))
            out.append((f"{prefix}: stored", step.stored))
            if step.denial is not None:
                out.append((f"{prefix}: denial", step.denial))
        return out


def needs_private_bed(case: cases.Case) -> str | None:
    """Why ``case`` cannot run on the shared multi-Node cluster and its webhook, or None."""
    if case.cluster.nodes < 2:
        return f"the webhook must see {case.cluster.nodes} Node(s)"
    if any(step.nodes is not None for step in case.steps):
        return "the case changes the Node count" + (
            " and restarts the webhook" if any(step.restart for step in case.steps) else "")
    if case.settings != configuration.TolerationDefaults():
        return f"the webhook needs its own configuration ({case.settings})"
    return None


def settings_args(settings: configuration.TolerationDefaults) -> tuple[str, ...]:
    """The arguments appended to the webhook's command for ``settings`` (the reference CLI's
    toleration flags; a webhook under test takes the same)."""
    args: list[str] = []
    for flag, value in (("--not-ready-toleration-seconds", settings.not_ready_toleration_seconds),
                        ("--unreachable-toleration-seconds",
                         settings.unreachable_toleration_seconds)):
        if value is not None:
            args += [flag, str(value)]
    return tuple(args)


def _get(obj: JsonValue, path: tuple[str, ...]) -> tuple[bool, JsonValue]:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return False, None
        obj = obj[key]
    return True, obj


def baseline(kind: str, submitted: JsonObject, stored: JsonObject) -> JsonObject:
    """``stored`` with ``WEBHOOK_FIELDS`` as submitted (replicas defaulted to 1 as the API server does)."""
    out = copy.deepcopy(stored)
    for path in WEBHOOK_FIELDS:
        present, value = _get(submitted, path)
        if not present and path[-1] == ("minReplicas" if kind == "HorizontalPodAutoscaler" else "replicas"):
            present, value = True, 1
        parent: JsonValue = out
        for key in path[:-1]:
            if isinstance(parent, dict) and (present or key in parent):
                parent = parent.setdefault(key, {})
            else:
                parent = None
        if isinstance(parent, dict) and present:
            parent[path[-1]] = copy.deepcopy(value)
        elif isinstance(parent, dict):
            parent.pop(path[-1], None)
    return out


class _Reply(NamedTuple):
    """The API server's answer: the object, or the refusal's message; the HTTP status."""

    obj: JsonObject | None
    refusal: str | None
    status: int


class Objects:
    """Raw CREATE/PATCH/GET of one kind: the stored JSON as sent, or the API server's refusal.

    Raw requests, not the typed client: it validates bodies itself (a StatefulSet without
    ``spec.selector`` never reaches the API server) and drops fields its models lack.
    """

    def __init__(self, api: client.ApiClient, kind: str, namespace: str, *, api_version: str = "") -> None:
        self._api = api
        path = _PATHS[kind]
        if api_version:  # another served version of the kind (autoscaling/v1 HPAs)
            path = f"/apis/{api_version}/namespaces/{{namespace}}/{path.rsplit('/', 1)[1]}"
        self._collection = path.format(namespace=namespace)
        self.namespace = namespace

    def _send(self, method: str, path: str, *, body: JsonObject | None = None,
              query: list[tuple[str, str]] | None = None,
              content_type: str = "application/json") -> _Reply:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        verb, url, header_params, payload, post_params = self._api.param_serialize(
            method=method, resource_path=path, query_params=query or [], header_params=headers, body=body,
            auth_settings=["BearerToken"])
        response = self._api.call_api(verb, url, header_params=header_params, body=payload,
                                      post_params=post_params, _request_timeout=_REQUEST_TIMEOUT_S)
        response.read()
        data = json.loads(response.data or b"null")
        if 200 <= response.status < 300 and isinstance(data, dict):
            return _Reply(data, None, response.status)
        message = data.get("message") if isinstance(data, dict) else None
        return _Reply(None, str(message) if message else f"HTTP {response.status}: {response.data!r}",
                      response.status)

    def create(self, body: JsonObject, *, dry_run: bool = False) -> _Reply:
        """POST ``body``."""
        return self._send("POST", self._collection, body=body, query=[("dryRun", "All")] if dry_run else [])

    def replace(self, name: str, body: JsonObject) -> _Reply:
        """PUT ``body`` (with the resourceVersion it replaces), an UPDATE for admission."""
        return self._send("PUT", f"{self._collection}/{name}", body=body)

    def merge_patch(self, name: str, patch: JsonObject) -> _Reply:
        """PATCH (RFC 7386), an UPDATE for admission."""
        return self._send("PATCH", f"{self._collection}/{name}", body=patch, content_type=_MERGE_PATCH)

    def read(self, name: str) -> JsonObject:
        """GET; raises ConfigError if the object cannot be read."""
        found, problem, _status = self._send("GET", f"{self._collection}/{name}")
        if found is None:
            raise errors.ConfigError(f"cannot read {self._collection}/{name}: {problem}")
        return found

    def delete(self, name: str) -> None:
        """DELETE; raises ConfigError unless deleted (or already gone)."""
        _found, problem, status = self._send("DELETE", f"{self._collection}/{name}")
        if problem is not None and status != 404:
            raise errors.ConfigError(f"cannot delete {self._collection}/{name}: {problem}")


class NodeSet:
    """Sets a bed's Node count through the API: adds or deletes Node objects (labelled zone Nodes).

    Added Nodes carry ``EXTRA_NODE_LABEL`` and are deleted first; no kubelet runs them (the
    handler and the companion count Node objects, whatever their readiness).
    """

    def __init__(self, api: client.ApiClient) -> None:
        self._core = client.CoreV1Api(api)

    def names(self) -> list[str]:
        """Current Node names, added ones last."""
        nodes = self._core.list_node(_request_timeout=_REQUEST_TIMEOUT_S).items or []
        return sorted((n.metadata.name for n in nodes),
                      key=lambda name: (name.startswith("zp-hac-node-"), name))

    def own(self, names: list[str] | None = None) -> int:
        """The bed's own Nodes (not added here; of ``names`` if given): fewer cannot be set."""
        return sum(not n.startswith("zp-hac-node-") for n in (self.names() if names is None else names))

    def set_count(self, count: int, zones: tuple[str, ...] = ()) -> None:
        """Make exactly ``count`` Nodes exist; added ones are spread over ``zones`` (or zone-a)."""
        names = self.names()
        if count < (own := self.own(names)):
            raise errors.ConfigError(f"cannot shrink to {count} Node(s): the bed runs "
                                     f"{own} (use a smaller bed)")
        for name in reversed(names[count:]):
            self._core.delete_node(name, _request_timeout=_REQUEST_TIMEOUT_S)
        zone_cycle = zones or ("zone-a",)
        for index in range(len(names), count):
            name = f"zp-hac-node-{uuid.uuid4().hex[:6]}"
            self._core.create_node(sweep.labelled({"metadata": {"name": name, "labels": {
                keys.TOPOLOGY_ZONE: zone_cycle[index % len(zone_cycle)], keys.TOPOLOGY_HOSTNAME: name,
                EXTRA_NODE_LABEL: "true"}}}), _request_timeout=_REQUEST_TIMEOUT_S)
        waiting.wait_for(lambda: (len(found := self.names()) == count, found),
                         what=f"{count} Node object(s)", timeout_s=_TIMEOUT_S)


def hpa_body(hpa: facts.HpaInfo) -> JsonObject:
    """The autoscaling/v2 HPA the handler reads as ``hpa``."""
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": hpa.name},
            "spec": {"scaleTargetRef": {"apiVersion": hpa.target_api_version, "kind": hpa.target_kind,
                                        "name": hpa.target_name},
                     "maxReplicas": hpa.max_replicas}}


def dry_run_post(api: client.ApiClient) -> barrier.Post:
    """Probes through the API server: a dry-run CREATE (the webhook is called, nothing stored).
    A validation refusal (422) is an answer: admission passed, the output is refused (e.g.
    zones " a")."""
    def post(namespace: str, probe: JsonObject) -> JsonValue:
        stored, refused, status = Objects(api, str(probe["kind"]), namespace).create(probe, dry_run=True)
        if stored is not None or status == validation.UNPROCESSABLE:
            return barrier.answer_of(stored, refused)
        return None

    return post


def review_post(send: direct.Send) -> barrier.Post:
    """Probes posted to the webhook itself (None unless it allows them)."""
    def post(namespace: str, probe: JsonObject) -> JsonValue:
        request = barrier.probe_request(probe, namespace)
        uid = str(uuid.uuid4())
        assert isinstance(request.obj, dict)
        status, body = send(direct.review_body(direct.API_VERSIONS[0], uid=uid, kind=request.kind,
                                               namespace=namespace, name=request.name,
                                               operation="CREATE", obj=request.obj))
        answer = direct.judge_answer(direct.API_VERSIONS[0], uid, request.obj, status, body)
        return None if answer.stored is None else barrier.answer_of(answer.stored)

    return post


def _reflected(pending: list[barrier.Pending], post: barrier.Post, timeout_s: float) -> list[str]:
    """Wait for ``pending`` changes; a report of each never reflected."""
    return [p.report(timeout_s) for p in barrier.wait(pending, post, timeout_s=timeout_s)]


def _wait_webhook_synced(api: client.ApiClient, namespace: str, case: cases.Case, timeout_s: float,
                         post: barrier.Post, *, shows: bool = True) -> bool:
    """Create the case's HPAs once the webhook knows the Namespace; wait until it knows them too;
    whether the sync HPA exists (``barrier.created``, ``barrier.hpas_changed``)."""
    for problem in _reflected([barrier.created(namespace, shows=shows)], post, timeout_s):
        raise waiting.WaitTimeout(problem)
    if not case.hpas:
        return False
    hpas = Objects(api, "HorizontalPodAutoscaler", namespace)
    for hpa in (*case.hpas, barrier.SYNC_HPA):
        refused = hpas.create(hpa_body(hpa)).refusal
        if refused is not None:
            raise errors.ConfigError(f"case {case.id}: HPA {hpa.name} refused: {refused}")
    for problem in _reflected([barrier.hpas_changed(namespace, True, shows=shows)], post, timeout_s):
        raise waiting.WaitTimeout(problem)
    return True


def _settle(read: Callable[[], JsonObject], judge: Callable[[JsonObject], list[str]], what: str,
            timeout_s: float) -> tuple[JsonObject, list[str]]:
    """Re-read until ``judge`` finds nothing wrong or time runs out; the last read and its failures."""
    last: list[tuple[JsonObject, list[str]]] = []

    def probe() -> tuple[bool, list[str]]:
        stored = read()
        last.append((stored, judge(stored)))
        return not last[-1][1], last[-1][1]

    with contextlib.suppress(waiting.WaitTimeout):  # the last observation's failures are the step's
        waiting.wait_for(probe, what=what, timeout_s=timeout_s, interval_s=0.5)
    return last[-1]


def namespace_name(case: cases.Case, suffix: str) -> str:
    """``hac-<id>-<suffix>``, at most 63 characters."""
    return f"{case.namespace.name[:62 - len(suffix)].rstrip('-')}-{suffix}"


def _judge(case: cases.Case, expect: cases.Expectation, submitted: JsonObject, stored: JsonObject | None,
           denial: str | None, *, code: int | None = None) -> list[str]:
    seen = submitted if stored is None else baseline(case.kind, submitted, stored)
    return expectations.check_expectation(expect, kind=case.kind, submitted=seen, stored=stored,
                                          denial=denial, code=code)


Restart = Callable[[int], None]
"""Stop the webhook's process, set the Node count, start it again behind its unchanged
registration (a bed's own webhook, as when its pod restarts)."""


@dataclass(slots=True)
class _Run:
    """What the steps of one live case act on."""

    api: client.ApiClient
    case: cases.Case
    namespace: str
    objects: Objects
    post: barrier.Post
    nodes: NodeSet | None
    restart: Restart | None
    timeout_s: float
    sync_present: bool = False
    """Whether the sync HPA exists (toggled after each HPA change)."""
    shows: bool = True
    """Whether the API server calls the webhook in the namespace (else no change shows)."""

    def toggle_sync_hpa(self) -> list[str]:
        """Create the sync HPA if absent, else delete it; wait until the webhook shows it
        (its HPA cache is fed in order: then it has the earlier HPA changes too)."""
        hpas = Objects(self.api, "HorizontalPodAutoscaler", self.namespace)
        if self.sync_present:
            hpas.delete(barrier.SYNC_NAME)
        else:
            hpas.create(hpa_body(barrier.SYNC_HPA))
        self.sync_present = not self.sync_present
        changed = barrier.hpas_changed(self.namespace, self.sync_present, shows=self.shows)
        return _reflected([changed], self.post, self.timeout_s)

    def facts(self) -> model.Facts:
        """What the handler reads now (the namespace as stored, the Node count; no HPAs:
        no probe is a target)."""
        core = client.CoreV1Api(self.api)
        stored = core.read_namespace(self.namespace, _request_timeout=_REQUEST_TIMEOUT_S).metadata
        count = len(core.list_node(_request_timeout=_REQUEST_TIMEOUT_S).items or [])
        info = facts.NamespaceInfo(self.namespace, dict(stored.labels or {}), dict(stored.annotations or {}))
        return model.Facts(info, (), count, self.case.settings)


def _nodes_step(run: _Run, index: int, before: JsonObject | None) -> LiveStep:
    """Change the Node count (with ``restart``: while the webhook is stopped), then wait for the
    companion's re-patch (or its absence to hold)."""
    case, step = run.case, run.case.steps[index]
    assert step.nodes is not None
    if run.nodes is None:
        raise errors.ConfigError(f"case {case.id} changes the Node count: pass a NodeSet")
    if step.restart:
        if run.restart is None:
            raise errors.ConfigError(f"case {case.id} restarts the webhook: pass restart=")
        run.restart(step.nodes)
    else:
        run.nodes.set_count(step.nodes, case.cluster.zones)
    stored, failures = _settle(
        lambda: run.objects.read(case.name),
        lambda after: _judge(case, step.expect, before or {}, after, None),
        f"the object after the Node count became {step.nodes}", run.timeout_s)
    return LiveStep(index, step.action, None, stored, None, tuple(failures))


def _delete_hpa_step(run: _Run, index: int, before: JsonObject | None) -> LiveStep:
    """Delete the HPA, then toggle the sync HPA and wait until the webhook shows it (its cache
    is fed in order, so it forgot the case's HPA too); judge the stored object."""
    step = run.case.steps[index]
    assert step.delete_hpa is not None
    Objects(run.api, "HorizontalPodAutoscaler", run.namespace).delete(step.delete_hpa)
    failures = [f"{p} (spec §4 step 3 reads the HPAs that exist)" for p in run.toggle_sync_hpa()]
    stored = run.objects.read(run.case.name)
    failures += _judge(run.case, step.expect, before or {}, stored, None)
    return LiveStep(index, step.action, None, stored, None, tuple(failures))


def _put_hpa_step(run: _Run, index: int, before: JsonObject | None) -> LiveStep:
    """Create or replace the HPA, then toggle the sync HPA and wait; judge the stored object."""
    step = run.case.steps[index]
    assert step.put_hpa is not None
    hpas = Objects(run.api, "HorizontalPodAutoscaler", run.namespace)
    body = hpa_body(step.put_hpa)
    created = hpas.create(body)
    if created.status == 409:
        current = hpas.read(step.put_hpa.name)
        version = _get(current, ("metadata", "resourceVersion"))[1]
        created = hpas.replace(step.put_hpa.name, {**body, "metadata": {
            "name": step.put_hpa.name, "resourceVersion": version}})
    if created.refusal is not None:
        raise errors.ConfigError(f"case {run.case.id}: HPA {step.put_hpa.name} refused: {created.refusal}")
    failures = [f"{p} (spec §4 step 3 reads the HPAs that exist)" for p in run.toggle_sync_hpa()]
    stored = run.objects.read(run.case.name)
    failures += _judge(run.case, step.expect, before or {}, stored, None)
    return LiveStep(index, step.action, None, stored, None, tuple(failures))


def _annotate_step(run: _Run, index: int, before: JsonObject | None) -> LiveStep:
    """Change the namespace's annotations; wait until the probes the model says tell the old
    and the new annotations apart show the change (``barrier.facts_changed``); judge."""
    step = run.case.steps[index]
    assert step.annotate is not None
    old = run.facts()
    assert old.namespace is not None
    merged = {k: v for k, v in {**old.namespace.annotations, **step.annotate}.items() if v is not None}
    new = dataclasses.replace(old, namespace=dataclasses.replace(old.namespace, annotations=merged))
    pending = barrier.facts_changed(run.namespace, old, new, run.post, what=f"annotations {step.annotate}",
                                    shows=run.shows)
    client.CoreV1Api(run.api).patch_namespace(
        run.namespace, {"metadata": {"annotations": dict(step.annotate)}},
        _request_timeout=_REQUEST_TIMEOUT_S)
    failures = _reflected([pending], run.post, run.timeout_s)
    stored = run.objects.read(run.case.name)
    failures += _judge(run.case, step.expect, before or {}, stored, None)
    return LiveStep(index, step.action, None, stored, None, tuple(failures))


def _create_namespace(api: client.ApiClient, case: cases.Case, suffix: str | None) -> str:
    namespace = namespace_name(case, suffix or uuid.uuid4().hex[:6])
    client.CoreV1Api(api).create_namespace(sweep.labelled(
        {"metadata": {"name": namespace, "labels": dict(case.namespace.labels),
                      "annotations": dict(case.namespace.annotations)}}),
        _request_timeout=_REQUEST_TIMEOUT_S)
    return namespace


def run_case(api: client.ApiClient, case: cases.Case, *, nodes: NodeSet | None = None,
             restart: Restart | None = None, suffix: str | None = None, keep_namespace: bool = False,
             timeout_s: float = _TIMEOUT_S) -> LiveResult:
    """Apply every step of ``case`` through the API server in a namespace of its own.

    The namespace is deleted afterwards unless ``keep_namespace``. ``nodes`` is needed for
    cases with ``nodes`` steps, ``restart`` for ``restart`` steps (on a bed of their own).
    """
    if case.direct:
        raise errors.ConfigError(f"case {case.id} is a review case: use run_review_case")
    namespace = _create_namespace(api, case, suffix)
    try:
        run = _Run(api, case, namespace, Objects(api, case.kind, namespace), dry_run_post(api), nodes,
                   restart, timeout_s, shows=barrier.called(case.namespace.labels, namespace))
        run.sync_present = _wait_webhook_synced(api, namespace, case, timeout_s, run.post, shows=run.shows)
        return LiveResult(case.id, namespace, _apply_steps(run))
    finally:
        if not keep_namespace:
            delete_namespace(api, namespace)


def run_review_case(api: client.ApiClient, case: cases.Case, send: direct.Send, *,
                    suffix: str | None = None, keep_namespace: bool = False,
                    timeout_s: float = _TIMEOUT_S) -> LiveResult:
    """Post the reviews of ``case`` to the webhook (``send``), in each AdmissionReview version;
    the Namespace and HPAs it reads exist in the cluster (``api``) the webhook watches."""
    if not case.direct:
        raise errors.ConfigError(f"case {case.id} runs through the API server: use run_case")
    namespace = _create_namespace(api, case, suffix)
    try:
        _wait_webhook_synced(api, namespace, case, timeout_s, review_post(send))
        steps = [LiveStep(s.index, s.action, s.submitted, s.stored, s.denial, s.failures)
                 for api_version in direct.API_VERSIONS
                 for s in direct.run_steps(case, namespace, send, api_version)]
        return LiveResult(case.id, namespace, tuple(steps))
    finally:
        if not keep_namespace:
            delete_namespace(api, namespace)


def _apply_steps(run: _Run) -> tuple[LiveStep, ...]:
    case, objects = run.case, run.objects
    stored: JsonObject | None = None
    steps: list[LiveStep] = []
    for index, step in enumerate(case.steps):
        if step.operation is None:
            act = _nodes_step if step.nodes is not None else _delete_hpa_step if step.delete_hpa is not None \
                else _put_hpa_step if step.put_hpa is not None else _annotate_step
            steps.append(act(run, index, stored))
            stored = steps[-1].stored
            continue
        if step.operation == "CREATE":
            submitted = copy.deepcopy(case.object)
            reply = objects.create(submitted)
        else:
            merged = expectations.merge_patch(objects.read(case.name), step.patch or {})
            assert isinstance(merged, dict)
            submitted = merged
            reply = objects.merge_patch(case.name, step.patch or {})
        stored = reply.obj if reply.obj is not None else stored
        code = reply.status if reply.refusal is not None else None
        steps.append(LiveStep(index, step.action, submitted, reply.obj, reply.refusal,
                              tuple(_judge(case, step.expect, submitted, reply.obj, reply.refusal,
                                           code=code))))
    return tuple(steps)


def delete_namespace(api: client.ApiClient, namespace: str) -> None:
    """Delete ``namespace`` without waiting (404 is fine)."""
    try:
        client.CoreV1Api(api).delete_namespace(namespace, _request_timeout=_REQUEST_TIMEOUT_S)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
