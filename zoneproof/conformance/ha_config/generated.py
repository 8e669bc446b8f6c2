"""The generated webhook suite's runs: inputs drawn by hypothesis, judged against the model.

``direct`` posts every drawn request (``generators.examples`` in the run's worlds) to the
webhook under test and judges the answer (``differential.judge``); an answer that changed
the object is posted again as an UPDATE (§4: the mutation is idempotent). ``api_server``
sends a drawn object through the real API server (CREATE; UPDATE as a PUT over an object
CREATEd first) with the webhook's registration, and judges what the API server answered
or stored: selection by the spec's registration (§3), the model's answer, the API
server's validation (``validation``), the fields the webhook writes compared as §15 says.

A run's first failure is shrunk by hypothesis to the smallest input that still fails (at
most hypothesis's 5 minutes: each try is live); later phases of a run that already failed
draw without shrinking (``shrink=False``) and report their first failing input as drawn, so
a wrong webhook's run ends in minutes, not in one 5-minute shrink per phase. ``Failure``
holds the input, the differences (field, expected and why, observed, spec section), the seed
that replays the run, and a case file (``casegen``) that replays the input alone.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import urllib3
import yaml
from hypothesis import HealthCheck, Verbosity, assume, given, seed, settings
from hypothesis import Phase as Stage
from hypothesis import strategies as st
from kubernetes import client

from zoneproof.conformance.ha_config import (
    casegen,
    cases,
    differential,
    direct,
    generators,
    live,
    model,
    selection,
    validation,
)
from zoneproof.specs.ha_config import configuration
from zoneproof.specs.ha_config.payloads import JsonObject, JsonValue

__all__ = ["BUDGETS", "Budget", "Failure", "Phase", "Report", "Stored", "api_server", "companion_expected",
           "companion_phase", "companion_settled", "direct_posts", "run_cases", "scenario_cases", "store"]


@dataclass(frozen=True, slots=True)
class Budget:
    """How many inputs a run draws."""

    examples: int
    """Requests posted directly per phase."""
    api_examples: int
    """Objects sent through the API server per phase."""
    worlds: int
    """Namespaces (with HPAs) per run."""
    edits: int
    """World edits (each followed by another phase)."""
    scenarios: int
    """Generated cases (steps while the facts change) per run."""


BUDGETS = {"default": Budget(examples=800, api_examples=25, worlds=10, edits=1, scenarios=3),
           "thorough": Budget(examples=8000, api_examples=250, worlds=24, edits=3, scenarios=30)}
"""``default`` fits qualify's budget; ``thorough`` is for nightly runs (``--zp-thorough``)."""


_POSTED, _THROUGH = "posted to the webhook", "through the API server"


@dataclass(slots=True)
class Failure:
    """A shrunk failing input."""

    phase: str
    text: str
    """What differs, the input, and how to replay it."""
    case_file: Path | None = None


@dataclass(slots=True)
class Phase:
    """One phase of a run: its inputs, the requests sent, the time, the first failure."""

    name: str
    examples: int = 0
    requests: int = 0
    seconds: float = 0.0
    failure: Failure | None = None

    @property
    def per_minute(self) -> float:
        """Inputs judged per minute."""
        return 60.0 * self.examples / self.seconds if self.seconds else 0.0


def _hypothesis(examples: int, run_seed: int, *,
                shrink: bool) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def apply(test: Callable[..., None]) -> Callable[..., None]:
        stages = (Stage.generate, Stage.shrink) if shrink else (Stage.generate,)
        configured = settings(max_examples=examples, deadline=None, database=None,
                              suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                              phases=stages, verbosity=Verbosity.quiet,
                              print_blob=False)(test)
        return seed(run_seed)(configured)

    return apply


def _readable(obj: JsonValue) -> JsonValue:
    """``obj`` without what the API server adds that the webhook never reads (managedFields, status)."""
    if not isinstance(obj, dict):
        return obj
    shown = {k: v for k, v in obj.items() if k != "status"}
    meta = shown.get("metadata")
    if isinstance(meta, dict):
        shown["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return shown


def _input_text(example: differential.Example) -> str:
    request, cluster = example.request, example.facts
    shown: JsonObject = {
        "namespace": None if cluster.namespace is None else {
            "name": cluster.namespace.name, "labels": dict(cluster.namespace.labels),
            "annotations": dict(cluster.namespace.annotations)},
        "hpas": [dataclasses.asdict(h) for h in cluster.hpas],
        "nodes": cluster.nodes,
        "webhook settings": dataclasses.asdict(cluster.settings),
        "review": {"apiVersion": example.api_version, "operation": request.operation,
                   "kind": f"{request.group}/{request.version} {request.kind}", "name": request.name,
                   "object": _readable(request.obj), "oldObject": _readable(request.old)}}
    return yaml.safe_dump(shown, sort_keys=False, allow_unicode=True, width=110)


def _failure(phase: str, example: differential.Example, differences: list[differential.Difference],
             replay: str, cases_dir: Path | None, *, via: str, shrunk: bool) -> Failure:
    shown = "\n  ".join(d.shown() for d in differences)
    how = "input shrunk by hypothesis" if shrunk else \
        "input as drawn: not shrunk, an earlier phase of the run failed and was"
    text = (f"{phase}: the webhook's answer is not one the spec allows ({via}; {how}).\n  {shown}"
            f"\ninput:\n{_input_text(example)}replay: {replay}")
    case_file = None
    description = f"generated ({phase}): {differences[0].field} ({differences[0].spec})"
    body = casegen.review_case(example, description=description) if via == _POSTED else None
    if via != _POSTED and (case := casegen.api_case(example, description=description)) is not None:
        judged, settled = casegen.with_expectations(case)
        body = casegen.case_yaml(judged) if settled else None
    if cases_dir is not None and body is not None:
        case_file = casegen.write(body, cases_dir)
        text += (f"\ncase file: {case_file} (copy it into conformance/ha_config/cases/ and run "
                 f"pytest conformance/ha_config/test_cases.py -k {body['id']})")
    return Failure(phase, text, case_file)


Judge = Callable[[differential.Example], tuple[differential.Example, list[differential.Difference]]]
"""Send one drawn input; (the input as sent, what differs from the spec)."""


def _drive(result: Phase, strategy: st.SearchStrategy[differential.Example], judge: Judge, *, examples: int,
           run_seed: int, replay: str, cases_dir: Path | None, via: str, shrink: bool) -> Phase:
    """Draw ``examples`` inputs and judge each; hypothesis shrinks the first failing one
    (``shrink``), else it is reported as drawn."""
    last: list[tuple[differential.Example, list[differential.Difference]]] = []

    @_hypothesis(examples, run_seed, shrink=shrink)
    @given(strategy)
    def check(drawn: differential.Example) -> None:
        example, found = judge(drawn)
        if found:
            last.append((example, found))
            raise AssertionError(found[0].shown())

    started = time.monotonic()
    try:
        check()
    except AssertionError:
        example, found = last[-1]
        result.failure = _failure(result.name, example, found, replay, cases_dir, via=via, shrunk=shrink)
    result.seconds = time.monotonic() - started
    return result


def direct_posts(send: direct.Send, worlds: list[model.Facts], *, phase: str, examples: int, run_seed: int,
                 replay: str, cases_dir: Path | None = None, shrink: bool = True) -> Phase:
    """Post ``examples`` drawn requests to the webhook; judge each (and its output again)."""
    result = Phase(phase)
    if not worlds:
        return result
    uids = iter(range(1 << 62))

    def post(example: differential.Example) -> differential.Verdict:
        result.requests += 1
        try:
            status, body = send(example.body())
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            status, body = 0, f"no answer: {exc}".encode()
        return differential.judge(example, status, body)

    def judge(drawn: differential.Example) -> tuple[differential.Example, list[differential.Difference]]:
        example = dataclasses.replace(drawn, uid=f"zoneproof-generated-{next(uids)}")
        result.examples += 1
        verdict = post(example)
        found = list(verdict.differences)
        if not found and verdict.changed and verdict.patched is not None:
            again = post(differential.resubmission(example, verdict.patched, next(uids)))
            found = [dataclasses.replace(d, field=f"{d.field} (its own output posted again as UPDATE, "
                                         "§4: idempotent)") for d in again.differences]
        return example, found

    return _drive(result, generators.examples(worlds), judge, examples=examples, run_seed=run_seed,
                  replay=replay, cases_dir=cases_dir, via=_POSTED, shrink=shrink)


# --- through the API server -----------------------------------------------------------------

_POD = ("spec", "template", "spec")


def _project(kind: str, obj: JsonObject | None) -> JsonObject:
    """The fields the webhook writes, and the labels (what the API server leaves alone)."""
    out: JsonObject = {}
    for path in live.WEBHOOK_FIELDS:
        node: JsonValue = obj
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            continue
        target = out
        for key in path[:-1]:
            child = target.setdefault(key, {})
            assert isinstance(child, dict)
            target = child
        target[path[-1]] = copy.deepcopy(node)
    return out


def _labels(obj: JsonValue) -> dict[str, str]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {k: v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, dict) else {}


def _expected_through_api_server(example: differential.Example) -> list[tuple[str, model.Outcome]]:
    """What the API server answers, as the spec says: ("stored", outcome) or ("refused", outcome
    with the status code), for each allowed outcome."""
    request, cluster = example.request, example.facts
    assert cluster.namespace is not None
    group, version, resource = selection.RESOURCES[request.kind]
    call = selection.Call(group, version, resource, request.operation, cluster.namespace.name,
                          cluster.namespace.labels, _labels(request.obj),
                          _labels(request.old) if request.operation == "UPDATE" else None)
    if not model.selected(call):
        assert isinstance(request.obj, dict)
        outcomes: tuple[model.Outcome, ...] = (model.Outcome(True, obj=request.obj, rule="§3: not selected"),)
    else:
        outcomes = model.admit(request, cluster)
    found = []
    for outcome in outcomes:
        if not outcome.allowed:
            found.append(("refused", outcome))
            continue
        assert isinstance(outcome.obj, dict)
        refusal = validation.refusal(request.kind, outcome.obj)
        if refusal is None:
            found.append(("stored", outcome))
        else:
            found.append(("refused", dataclasses.replace(
                outcome, code=validation.UNPROCESSABLE, message=None, message_pattern=".*",
                rule=f"{outcome.rule}; then the API server's validation refuses it: {refusal}")))
    return found


def _api_differences(example: differential.Example, stored: JsonObject | None, refusal: str | None,
                     status: int) -> list[differential.Difference]:
    best: list[differential.Difference] | None = None
    for how, outcome in _expected_through_api_server(example):
        if how == "refused":
            found = [] if stored is None and status == outcome.code and (
                outcome.message is None or outcome.message in (refusal or "")) else [
                differential.Difference("API server answer", f"refused with HTTP {outcome.code}"
                                        + (f" saying {outcome.message!r}" if outcome.message else ""),
                                        f"HTTP {status}: {refusal or 'stored'}", outcome.rule)]
        elif stored is None:
            found = [differential.Difference("API server answer", "the object stored",
                                             f"refused, HTTP {status}: {refusal}", outcome.rule)]
        else:
            assert outcome.obj is not None
            found = differential.compare_objects(_project(example.request.kind, outcome.obj),
                                                 _project(example.request.kind, stored), outcome)
        if best is None or len(found) < len(best):
            best = found
        if not found:
            break
    return best or []


def _same_selector(old: JsonObject, new: JsonObject) -> JsonObject:
    """``new`` with ``old``'s selector and template labels (immutable in apps/v1)."""
    fixed = copy.deepcopy(new)
    old_spec, spec = old.get("spec"), fixed.get("spec")
    if isinstance(old_spec, dict) and isinstance(spec, dict):
        spec["selector"] = copy.deepcopy(old_spec.get("selector"))
        old_template, template = old_spec.get("template"), spec.get("template")
        if isinstance(old_template, dict) and isinstance(template, dict):
            template["metadata"] = copy.deepcopy(old_template.get("metadata"))
    return fixed


def _create(objects: live.Objects, name: str, body: JsonObject) -> tuple[JsonObject | None, str | None, int]:
    """CREATE ``body`` (deleting an object of the name first)."""
    objects.delete(name)
    for _attempt in range(20):
        reply = objects.create(body)
        if reply.status != 409:
            return reply.obj, reply.refusal, reply.status
        time.sleep(0.1)
    return None, "the object of this name was not deleted in time", 409


def api_server(api: client.ApiClient, worlds: list[model.Facts], *, phase: str, examples: int,
               run_seed: int, replay: str, cases_dir: Path | None = None, shrink: bool = True) -> Phase:
    """Send ``examples`` drawn objects through the API server; judge what it answered or stored."""
    result = Phase(phase)
    worlds = [w for w in worlds if w.namespace is not None]
    if not worlds:
        return result
    left: set[tuple[str, str, str]] = set()  # (kind, namespace, name) this phase stored

    def judge(drawn: differential.Example) -> tuple[differential.Example, list[differential.Difference]]:
        request = _aside(drawn.request)
        assert drawn.facts.namespace is not None and isinstance(request.obj, dict)
        objects = live.Objects(api, request.kind, drawn.facts.namespace.name)
        left.add((request.kind, drawn.facts.namespace.name, request.name))
        sent = copy.deepcopy(request.obj)
        if request.operation == "UPDATE":
            assert isinstance(request.old, dict)
            old, _refusal, _status = _create(objects, request.name, request.old)
            result.requests += 1
            assume(old is not None)
            for _attempt in range(10):  # a controller writing the status meanwhile: 409, again
                assert old is not None
                sent = _same_selector(old, request.obj)
                meta = sent.setdefault("metadata", {})
                assert isinstance(meta, dict)
                meta["resourceVersion"] = _resource_version(old)
                reply = objects.replace(request.name, sent)
                result.requests += 1
                if reply.status != 409:
                    break
                old = objects.read(request.name)
            stored, refusal, status = reply.obj, reply.refusal, reply.status
            example = dataclasses.replace(drawn, request=dataclasses.replace(request, obj=sent, old=old))
        elif drawn.served_version:
            served = live.Objects(api, request.kind, drawn.facts.namespace.name,
                                  api_version=drawn.served_version)
            stored, refusal, status = _create(served, request.name, _as_v1(sent))
            example = drawn
        else:
            stored, refusal, status = _create(objects, request.name, sent)
            example = drawn
        result.requests += 1
        result.examples += 1
        return example, _api_differences(example, stored, refusal, status)

    try:
        return _drive(result, generators.examples(worlds, api_valid=True), judge, examples=examples,
                      run_seed=run_seed, replay=replay, cases_dir=cases_dir, via=_THROUGH, shrink=shrink)
    finally:
        # what the phase stored goes: later phases (the companion's re-patches after the
        # namespaces change, §11) must meet only the objects they judge
        for kind, namespace, name in sorted(left):
            live.Objects(api, kind, namespace).delete(name)


def _as_v1(hpa: JsonObject) -> JsonObject:
    """An autoscaling/v2 HPA without metrics as autoscaling/v1 spells it (the same fields)."""
    return {**hpa, "apiVersion": "autoscaling/v1"}


UNTARGETED = "zp-no-such-target"
"""What the HPAs a run stores target: no object of the run has this name, so they never
change the facts other inputs are judged with (§6: an HPA's own target is irrelevant)."""


def _aside(request: model.Request) -> model.Request:
    """``request`` with its HPA (and the old one) targeting ``UNTARGETED``."""
    if request.kind != "HorizontalPodAutoscaler":
        return request

    def retarget(obj: JsonValue) -> JsonValue:
        if not isinstance(obj, dict) or not isinstance(spec := obj.get("spec"), dict):
            return obj
        target = spec.get("scaleTargetRef")
        target = target if isinstance(target, dict) else {}
        return {**obj, "spec": {**spec, "scaleTargetRef": {**target, "name": UNTARGETED}}}

    return dataclasses.replace(request, obj=retarget(request.obj), old=retarget(request.old))


def _resource_version(obj: JsonObject) -> str:
    meta = obj.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return str(version)


@dataclass(slots=True)
class Report:
    """A run's phases and what the worlds' barrier could not judge."""

    seed: int
    phases: list[Phase] = field(default_factory=list)
    unreflected: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per phase, for the terminal and the JUnit properties."""
        return [f"{p.name}: {p.examples} inputs, {p.requests} requests in {p.seconds:.1f} s "
                f"({p.per_minute:.0f}/min){' FAILED' if p.failure else ''}" for p in self.phases]

    @property
    def failures(self) -> list[str]:
        """Every failure's text, and every change the webhook never reflected."""
        return [p.failure.text for p in self.phases if p.failure] + self.unreflected




# --- the companion controller (§11) -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Stored:
    """An object a run stored through the API server (for the companion's check)."""

    namespace: str
    kind: str
    name: str


def store(api: client.ApiClient, worlds: list[model.Facts], *, count: int, run_seed: int) -> list[Stored]:
    """Store ``count`` drawn Deployments and StatefulSets (``zp-c-<i>``, no HPA targets them)
    across ``worlds`` through the API server; those the API server kept."""
    def draw(draw_: st.DrawFn) -> JsonObject:
        kind = draw_(st.sampled_from(("Deployment", "StatefulSet")))
        return generators.draw_workload(draw_, kind, "zp-c", api_valid=True)

    kept = []
    targets = [w for w in worlds if w.namespace is not None]
    for index, obj in enumerate(generators.sample(st.composite(draw)(), count, run_seed)):
        world = targets[index % len(targets)] if targets else None
        if world is None or world.namespace is None:
            break
        name = f"zp-c-{index}"
        meta = obj["metadata"]
        assert isinstance(meta, dict)
        meta["name"] = name
        kind = str(obj["kind"])
        if kind == "StatefulSet":
            spec = obj["spec"]
            assert isinstance(spec, dict)
            spec["serviceName"] = name
        reply = live.Objects(api, kind, world.namespace.name).create(obj)
        if reply.obj is not None:
            kept.append(Stored(world.namespace.name, kind, name))
    return kept


def _recomputed(world: model.Facts, kind: str, current: JsonObject) -> list[JsonObject]:
    """What the webhook may make of ``current`` on the companion's ``{}`` patch (an UPDATE,
    §4 to §9) that the API server keeps; none when it refuses every outcome."""
    meta = current.get("metadata")
    assert isinstance(meta, dict) and world.namespace is not None
    request = model.Request("UPDATE", "apps", "v1", kind, world.namespace.name, str(meta.get("name")),
                            current, current)
    return [o.obj for o in model.admit(request, world) if o.allowed and o.obj is not None
            and validation.refusal(kind, o.obj) is None]


def _a_patch_fails(api: client.ApiClient, worlds: list[model.Facts], node_count: int) -> bool:
    """Whether the companion's reconcile meets a ``{}`` patch the API server refuses (a target
    whose every recomputation is invalid) in the worlds' namespaces. Upstream's reconcile then
    stops: the error ends it and, having recorded the Node count first, it does not come back
    (gardener pkg/resourcemanager/controller/node/highavailabilityconfig, reconciler.go), and
    its cached lists have no order, so any other target may be left unpatched."""
    apps = client.AppsV1Api(api)
    for world in worlds:
        if world.namespace is None:
            continue
        facts = dataclasses.replace(world, nodes=node_count)
        for kind, listing in (("Deployment", apps.list_namespaced_deployment),
                              ("StatefulSet", apps.list_namespaced_stateful_set)):
            for obj in api.sanitize_for_serialization(listing(world.namespace.name).items):
                current = {**obj, "apiVersion": "apps/v1", "kind": kind}
                if model.companion_targets([model.StoredObject(world.namespace.labels, kind, current)],
                                           node_count) and not _recomputed(facts, kind, current):
                    return True
    return False


def companion_expected(api: client.ApiClient, worlds: list[model.Facts], stored: list[Stored],
                       node_count: int) -> list[tuple[Stored, list[JsonObject], str]]:
    """Each stored object and what it may become once the Node count is ``node_count``
    (§11: re-patched through the webhook when its first hostname constraint disagrees; left
    as it is too when another target's patch fails, ``_a_patch_fails``), with why."""
    by_namespace = {w.namespace.name: w for w in worlds if w.namespace is not None}
    unreached_too = _a_patch_fails(api, worlds, node_count)
    found = []
    for item in stored:
        current = live.Objects(api, item.kind, item.namespace).read(item.name)
        world = dataclasses.replace(by_namespace[item.namespace], nodes=node_count)
        assert world.namespace is not None
        if not model.companion_targets([model.StoredObject(world.namespace.labels, item.kind, current)],
                                       node_count):
            found.append((item, [_project(item.kind, current)], "§11: not patched (its first hostname "
                          "constraint agrees with the Node count, or it has none, or it is not selected)"))
            continue
        objects = _recomputed(world, item.kind, current) or [current]
        why = "§11: re-patched with {} (an UPDATE: the webhook recomputes it, §4 to §9)"
        if unreached_too and current not in objects:
            objects.append(current)
            why += ", or not reached (another target's patch is refused: upstream stops there)"
        found.append((item, [_project(item.kind, o) for o in objects], why))
    return found


def companion_phase(api: client.ApiClient, expected: list[tuple[Stored, list[JsonObject], str]], *,
                    name: str, what: str) -> Phase:
    """A phase judging the companion's re-patches (``companion_settled``)."""
    started = time.monotonic()
    left = companion_settled(api, expected, what=what)
    phase = Phase(name, len(expected), len(expected), time.monotonic() - started)
    if left:
        phase.failure = Failure(name, f"{name} (§11):\n  " + "\n  ".join(left))
    return phase


COMPANION_TIMEOUT_S = 120.0
"""How long the companion may take to re-patch every stored object (§11 names no bound; a
correct one takes ~2 s, but one failed list on a stalled API server costs its 30 s request
timeout and a retry: a 30 s bound failed the reference once on a loaded machine)."""


def companion_settled(api: client.ApiClient, expected: list[tuple[Stored, list[JsonObject], str]], *,
                      what: str, timeout_s: float = COMPANION_TIMEOUT_S, grace_s: float = 2.0
                      ) -> list[str]:
    """Poll the stored objects until each is as ``expected`` (then once more after ``grace_s``:
    nothing else was patched); what does not hold."""
    deadline = time.monotonic() + timeout_s
    time.sleep(grace_s)
    while True:
        left = []
        for item, wanted, why in expected:
            seen = _project(item.kind, live.Objects(api, item.kind, item.namespace).read(item.name))
            if seen not in wanted:
                differences = differential.compare_objects(wanted[0], seen)
                left.append(f"{item.namespace}/{item.kind}/{item.name} after {what}: {why}:\n    "
                            + "\n    ".join(d.shown() for d in differences))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


# --- generated cases: steps while the facts change ----------------------------------------------

def scenario_cases(run_seed: int, count: int, *, node_steps: bool,
                   settings: configuration.TolerationDefaults | None = None) -> list[cases.Case]:
    """``count`` generated cases (``generators.scenarios``) whose every step the model decides
    (``casegen.with_expectations``), each named by its content. They run through a real API
    server, so none leaves its object where the cluster's HPA controller rescales it
    (``casegen.rescaled_by_the_hpa_controller``: an outcome timed by that controller)."""
    found: list[cases.Case] = []
    for drawn in generators.sample(generators.scenarios(node_steps=node_steps), count * 4, run_seed):
        case = drawn if settings is None else dataclasses.replace(drawn, settings=settings)
        judged, settled = casegen.with_expectations(case)
        if not settled or casegen.rescaled_by_the_hpa_controller(judged) is not None:
            continue
        identifier = casegen.case_id("gen", casegen.case_yaml(judged))
        if any(c.id == identifier for c in found):
            continue
        found.append(dataclasses.replace(
            judged, id=identifier, path=Path(f"{identifier}.yaml"),
            namespace=dataclasses.replace(judged.namespace, name=f"hac-{identifier}")))
        if len(found) == count:
            break
    return found


def run_cases(generated_cases: list[cases.Case], apply: Callable[[cases.Case], live.LiveResult], *,
              phase: str, replay: str, cases_dir: Path) -> Phase:
    """Run each case (``apply``: through the API server); the first failing one is written."""
    result = Phase(phase)
    started = time.monotonic()
    for case in generated_cases:
        outcome = apply(case)
        result.examples += 1
        result.requests += len(case.steps)
        if not outcome.passed and result.failure is None:
            path = casegen.write(casegen.case_yaml(case), cases_dir)
            failures = "\n  ".join(outcome.failures)
            result.failure = Failure(phase, (
                f"{phase}: case {case.id} (namespace {outcome.namespace}):\n  {failures}"
                f"\ncase file: {path} (copy it into conformance/ha_config/cases/ and run pytest "
                f"conformance/ha_config/test_cases.py -k {case.id}); replay: {replay}"), path)
    result.seconds = time.monotonic() - started
    return result
