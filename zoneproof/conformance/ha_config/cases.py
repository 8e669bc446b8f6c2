"""Loading the data-driven conformance cases (``conformance/ha_config/cases/*.yaml``).

``load_cases`` reads every file, validates all of them and raises one ConfigError listing
every problem (file, field, what is wrong). The schema is in
``conformance/ha_config/README.md``; the types below mirror it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from zoneproof import errors
from zoneproof._util import locations
from zoneproof.specs.ha_config import configuration, facts
from zoneproof.specs.ha_config.payloads import JsonObject

__all__ = [
    "CASES_DIR",
    "UNSET",
    "VIA_API_SERVER",
    "VIA_REVIEW",
    "Case",
    "ClusterShape",
    "Expectation",
    "Step",
    "Unset",
    "load_case",
    "load_cases",
]

CASES_DIR = locations.suite_path("conformance", "ha_config", "cases")
"""The cases shipped with the suites (a checkout, or the installed zoneproof_suites)."""

_API_VERSIONS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1",
                 "HorizontalPodAutoscaler": "autoscaling/v2"}
_ID = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_CASE_KEYS = {"id", "description", "spec", "via", "namespace", "cluster", "hpas", "webhook", "object",
              "steps"}
_EXPECT_KEYS = {"denied", "code", "untouched", "replicas", "minReplicas", "maxReplicas",
                "topologySpreadConstraints", "affinity", "tolerations"}
_STEP_KEYS = ("operation", "patch", "oldObject", "nodes", "restart", "delete_hpa", "put_hpa",
              "annotate_namespace", "expect")
_FACT_STEPS = ("annotate_namespace", "put_hpa")
"""Steps that change what the handler reads and admit nothing: their ``expect`` is optional."""
VIA_API_SERVER, VIA_REVIEW = "api-server", "review"


class Unset(enum.Enum):
    """Marks an expectation field the case does not check."""

    UNSET = "unset"


UNSET = Unset.UNSET


@dataclass(frozen=True, slots=True)
class Expectation:
    """What must hold after a step; UNSET fields are not checked, None means "absent"."""

    denied: str | None = None
    """A substring of the denial message; the step must be refused."""
    code: int | None = None
    """With ``denied``: the HTTP status code of the refusal (e.g. 403)."""
    untouched: bool = False
    """The stored object equals the submitted one (the webhook was not called or changed nothing)."""
    replicas: int | None | Unset = UNSET
    min_replicas: int | None | Unset = UNSET
    max_replicas: int | None | Unset = UNSET
    topology_spread_constraints: tuple[JsonObject, ...] | Unset = UNSET
    """Compared as a multiset after normalisation; () means none."""
    affinity: JsonObject | None | Unset = UNSET
    """Compared exactly after normalisation."""
    tolerations: tuple[JsonObject, ...] | Unset = UNSET
    """Compared as a multiset after normalisation; () means none."""


@dataclass(frozen=True, slots=True)
class Step:
    """CREATE the case object, UPDATE it with a merge ``patch``, change the Node count (with
    ``restart``: while the webhook is stopped, then start it again), delete an HPA, create or
    replace one (``put_hpa``), or change the namespace's annotations (``annotate``)."""

    operation: Literal["CREATE", "UPDATE"] | None
    patch: JsonObject | None
    nodes: int | None
    expect: Expectation
    restart: bool = False
    delete_hpa: str | None = None
    put_hpa: facts.HpaInfo | None = None
    annotate: Mapping[str, str | None] | None = None
    """Annotations set on the namespace (None removes one), as a JSON merge patch."""
    old_object: JsonObject | None = None
    """Review cases: the ``oldObject`` an UPDATE posts (default: the previous step's result)."""

    @property
    def action(self) -> str:
        """CREATE, UPDATE, ``nodes=N``, ``restart nodes=N``, ``delete HPA NAME``, ``put HPA
        NAME`` or ``annotate namespace``."""
        if self.operation is not None:
            return self.operation
        if self.delete_hpa is not None:
            return f"delete HPA {self.delete_hpa}"
        if self.put_hpa is not None:
            return f"put HPA {self.put_hpa.name}"
        if self.annotate is not None:
            return "annotate namespace"
        return f"{'restart ' if self.restart else ''}nodes={self.nodes}"


@dataclass(frozen=True, slots=True)
class ClusterShape:
    """Node count (what the handler reads) and Node zones (for live beds; the handler ignores them)."""

    nodes: int
    zones: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Case:
    """One conformance case."""

    id: str
    description: str
    spec: str
    namespace: facts.NamespaceInfo
    cluster: ClusterShape
    hpas: tuple[facts.HpaInfo, ...]
    settings: configuration.TolerationDefaults
    object: JsonObject
    steps: tuple[Step, ...]
    path: Path
    via: str = VIA_API_SERVER
    """``api-server``: through the API server; ``review``: AdmissionReviews posted to the
    webhook itself (the handler's own behaviour the API server hides)."""

    @property
    def direct(self) -> bool:
        """True when the case posts AdmissionReviews to the webhook directly."""
        return self.via == VIA_REVIEW

    @property
    def fewest_nodes(self) -> int:
        """The smallest Node count the case sets (its cluster's or a later step's)."""
        return min([self.cluster.nodes, *(s.nodes for s in self.steps if s.nodes is not None)])

    @property
    def kind(self) -> str:
        """The object's kind."""
        return str(self.object["kind"])

    @property
    def name(self) -> str:
        """The object's metadata.name."""
        meta = self.object["metadata"]
        assert isinstance(meta, dict)
        return str(meta["name"])


class _Problems:
    """Collects problems of one file instead of stopping at the first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[str] = []

    def add(self, where: str, what: str) -> None:
        self.items.append(f"{self.path.name}: {where}: {what}")


def _str_map(value: object, where: str, problems: _Problems) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(x, str) for item in value.items() for x in item):
        problems.add(where, f"must map strings to strings (quote values like \"true\"), got {value!r}")
        return {}
    return dict(value)


def _int(value: object, where: str, problems: _Problems, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        problems.add(where, f"must be an integer >= {minimum}, got {value!r}")
        return minimum
    return value


def _objects(value: object, where: str, problems: _Problems) -> tuple[JsonObject, ...]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        problems.add(where, f"must be a list of objects, got {value!r}")
        return ()
    return tuple(value)


def _optional_int(raw: Mapping[str, object], key: str, where: str, problems: _Problems) -> int | None | Unset:
    if key not in raw:
        return UNSET
    value = raw[key]
    return None if value is None else _int(value, f"{where}.{key}", problems, minimum=-(1 << 31))


def _expectation(raw: object, where: str, problems: _Problems, *, optional: bool = False) -> Expectation:
    if raw is None and optional:
        return Expectation()
    if not isinstance(raw, dict):
        problems.add(where, "must be a mapping")
        return Expectation()
    for key in sorted(set(raw) - _EXPECT_KEYS):
        problems.add(where, f"unknown key {key!r} (known: {', '.join(sorted(_EXPECT_KEYS))})")
    denied = raw.get("denied")
    if denied is not None and (not isinstance(denied, str) or not denied):
        problems.add(f"{where}.denied", "must be a non-empty message substring")
        denied = None
    code = raw.get("code")
    if code is not None and (denied is None or isinstance(code, bool) or not isinstance(code, int)):
        problems.add(f"{where}.code", "is the HTTP status of a refusal: an integer beside denied")
        code = None
    if denied is not None and set(raw) - {"denied", "code"}:
        problems.add(where, "denied excludes every other expectation (a denied step stores nothing)")
    untouched = raw.get("untouched", False)
    if not isinstance(untouched, bool):
        problems.add(f"{where}.untouched", "must be true or false")
        untouched = False
    affinity = raw.get("affinity", UNSET)
    if affinity is not None and affinity is not UNSET and not isinstance(affinity, dict):
        problems.add(f"{where}.affinity", "must be an object or null")
        affinity = UNSET
    tscs, tolerations = raw.get("topologySpreadConstraints", UNSET), raw.get("tolerations", UNSET)
    expectation = Expectation(
        denied=denied, code=code, untouched=untouched,
        replicas=_optional_int(raw, "replicas", where, problems),
        min_replicas=_optional_int(raw, "minReplicas", where, problems),
        max_replicas=_optional_int(raw, "maxReplicas", where, problems),
        topology_spread_constraints=UNSET if tscs is UNSET else _objects(
            tscs or [], f"{where}.topologySpreadConstraints", problems),
        affinity=affinity,
        tolerations=UNSET if tolerations is UNSET else _objects(
            tolerations or [], f"{where}.tolerations", problems),
    )
    if expectation == Expectation() and not optional:
        problems.add(where, "checks nothing: give at least one expectation")
    return expectation


def _annotations(raw: object, where: str, problems: _Problems) -> dict[str, str | None] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(isinstance(k, str) and (v is None or isinstance(v, str))
                                            for k, v in raw.items()):
        problems.add(where, "must map annotation keys to strings (or null to remove one)")
        return None
    return dict(raw)


def _step(raw: object, where: str, problems: _Problems, first: bool) -> Step:
    if not isinstance(raw, dict):
        problems.add(where, "must be a mapping")
        return Step(None, None, None, Expectation())
    unknown = set(raw) - set(_STEP_KEYS)
    for key in sorted(unknown):
        problems.add(where, f"unknown key {key!r} (known: {', '.join(_STEP_KEYS)})")
    operation, patch, nodes = raw.get("operation"), raw.get("patch"), raw.get("nodes")
    restart, delete_hpa = raw.get("restart", False), raw.get("delete_hpa")
    put_hpa = None if raw.get("put_hpa") is None else _hpa(raw["put_hpa"], f"{where}.put_hpa", problems)
    annotate = _annotations(raw.get("annotate_namespace"), f"{where}.annotate_namespace", problems)
    old_object = raw.get("oldObject")
    if sum(x is not None for x in (operation, nodes, delete_hpa, raw.get("put_hpa"),
                                   raw.get("annotate_namespace"))) != 1:
        problems.add(where, "needs exactly one of operation (CREATE/UPDATE), nodes (a new Node "
                     "count), delete_hpa (an HPA's name), put_hpa (an HPA to create or replace) "
                     "and annotate_namespace (annotations to set)")
    if old_object is not None and (operation != "UPDATE" or not isinstance(old_object, dict)):
        problems.add(f"{where}.oldObject", "only UPDATE steps take an oldObject, and it must be an object")
        old_object = None
    if not isinstance(restart, bool) or (restart and nodes is None):
        problems.add(f"{where}.restart", "must be true or false, and true only with nodes (the "
                     "count set while the webhook is stopped)")
        restart = False
    if delete_hpa is not None and (not isinstance(delete_hpa, str) or not delete_hpa):
        problems.add(f"{where}.delete_hpa", "must name one of the case's hpas")
        delete_hpa = None
    if operation not in (None, "CREATE", "UPDATE"):
        problems.add(f"{where}.operation", f"must be CREATE or UPDATE, got {operation!r}")
        operation = None
    if first and operation != "CREATE" and old_object is None:
        problems.add(where, "the first step must be operation: CREATE (or an UPDATE with its oldObject)")
    if patch is not None and (operation != "UPDATE" or not isinstance(patch, dict)):
        problems.add(f"{where}.patch", "only UPDATE steps take a patch, and it must be an object")
        patch = None
    optional = any(raw.get(key) is not None for key in _FACT_STEPS)
    return Step(operation=operation, patch=patch,
                nodes=None if nodes is None else _int(nodes, f"{where}.nodes", problems),
                expect=_expectation(raw.get("expect"), f"{where}.expect", problems, optional=optional),
                restart=restart, delete_hpa=delete_hpa, put_hpa=put_hpa, annotate=annotate,
                old_object=old_object)


def _hpa(raw: object, where: str, problems: _Problems) -> facts.HpaInfo | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("scaleTargetRef"), dict):
        problems.add(where, "must be {name, scaleTargetRef: {apiVersion, kind, name}, maxReplicas}")
        return None
    ref = raw["scaleTargetRef"]
    fields = [raw.get("name"), ref.get("apiVersion"), ref.get("kind"), ref.get("name")]
    if not all(isinstance(f, str) and f for f in fields):
        problems.add(where, "name and scaleTargetRef apiVersion/kind/name must be non-empty strings")
        return None
    name, api_version, kind, target = (str(f) for f in fields)
    return facts.HpaInfo(name, api_version, kind, target,
                         _int(raw.get("maxReplicas"), f"{where}.maxReplicas", problems, minimum=1))


def _object(raw: object, problems: _Problems) -> JsonObject:
    if not isinstance(raw, dict):
        problems.add("object", "must be a Deployment, StatefulSet or HorizontalPodAutoscaler manifest")
        return {}
    kind = raw.get("kind")
    if kind not in _API_VERSIONS:
        problems.add("object.kind", f"must be one of {', '.join(_API_VERSIONS)}, got {kind!r}")
    elif raw.get("apiVersion") != _API_VERSIONS[str(kind)]:
        problems.add("object.apiVersion", f"{kind} needs apiVersion {_API_VERSIONS[str(kind)]}")
    meta = raw.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or "namespace" in meta:
        problems.add("object.metadata", "needs a name and no namespace (the harness picks the namespace)")
    return raw


def _cluster(raw: object, problems: _Problems) -> ClusterShape:
    if not isinstance(raw, dict) or set(raw) - {"nodes", "zones"}:
        problems.add("cluster", "must be {nodes: N, zones: [...]}")
        return ClusterShape(1)
    zones = raw.get("zones") or []
    if not isinstance(zones, list) or not all(isinstance(z, str) for z in zones):
        problems.add("cluster.zones", "must be a list of zone names")
        zones = []
    return ClusterShape(_int(raw.get("nodes"), "cluster.nodes", problems), tuple(zones))


def _settings(raw: object, problems: _Problems) -> configuration.TolerationDefaults:
    known = ("notReadyTolerationSeconds", "unreachableTolerationSeconds")
    webhook = raw or {}
    if not isinstance(webhook, dict) or set(webhook) - set(known):
        problems.add("webhook", f"only {' and '.join(known)} are known")
        return configuration.TolerationDefaults()
    not_ready, unreachable = (None if webhook.get(k) is None else _int(webhook[k], f"webhook.{k}", problems)
                              for k in known)
    return configuration.TolerationDefaults(not_ready, unreachable)


def _list(raw: Mapping[str, object], key: str, problems: _Problems, *,
          required: bool = False) -> list[object]:
    value = raw.get(key) or []
    if not isinstance(value, list) or (required and not value):
        problems.add(key, "must be a non-empty list" if required else "must be a list")
        return []
    return value


def _parse(raw: object, path: Path, problems: _Problems) -> Case | None:
    if not isinstance(raw, dict):
        problems.add("(top)", "must be a mapping")
        return None
    for key in sorted(set(raw) - _CASE_KEYS):
        problems.add("(top)", f"unknown key {key!r} (known: {', '.join(sorted(_CASE_KEYS))})")
    for key in ("id", "description", "spec"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            problems.add(key, "must be a non-empty string")
    if raw.get("id") != path.stem or not _ID.fullmatch(path.stem):
        problems.add("id", f"must equal the file name without .yaml ({path.stem!r}): lowercase, digits, '-'")
    namespace = raw.get("namespace") or {}
    if not isinstance(namespace, dict) or set(namespace) - {"labels", "annotations"}:
        problems.add("namespace", "must be {labels: {...}, annotations: {...}}")
        namespace = {}
    via = raw.get("via", VIA_API_SERVER)
    if via not in (VIA_API_SERVER, VIA_REVIEW):
        problems.add("via", f"must be {VIA_API_SERVER} or {VIA_REVIEW}, got {via!r}")
        via = VIA_API_SERVER
    obj = _object(raw.get("object"), problems)
    steps = tuple(_step(s, f"steps[{i}]", problems, i == 0)
                  for i, s in enumerate(_list(raw, "steps", problems, required=True)))
    if any(s.nodes is not None for s in steps) and obj.get("kind") not in ("Deployment", "StatefulSet"):
        problems.add("steps", "nodes steps need a Deployment or StatefulSet")
    if via == VIA_REVIEW and any(s.operation is None for s in steps):
        problems.add("steps", "a review case posts CREATE/UPDATE reviews only (no nodes, HPA or "
                     "namespace steps)")
    if via != VIA_REVIEW and any(s.old_object is not None for s in steps):
        problems.add("steps", "oldObject is for review cases (through the API server it is the "
                     "stored object)")
    hpas = tuple(h for i, item in enumerate(_list(raw, "hpas", problems))
                 if (h := _hpa(item, f"hpas[{i}]", problems)))
    known = {h.name for h in hpas}
    for index, step in enumerate(steps):
        if step.delete_hpa is not None and step.delete_hpa not in known:
            problems.add(f"steps[{index}].delete_hpa", f"{step.delete_hpa!r} is not one of the "
                         "case's hpas")
        known |= {step.put_hpa.name} if step.put_hpa is not None else set()
    return Case(
        id=str(raw.get("id")), description=str(raw.get("description")), spec=str(raw.get("spec")),
        namespace=facts.NamespaceInfo(
            f"hac-{path.stem}"[:63].rstrip("-"),
            _str_map(namespace.get("labels"), "namespace.labels", problems),
            _str_map(namespace.get("annotations"), "namespace.annotations", problems)),
        cluster=_cluster(raw.get("cluster"), problems),
        hpas=hpas, settings=_settings(raw.get("webhook"), problems), object=obj, steps=steps,
        path=path, via=str(via))


def load_case(path: Path) -> Case:
    """One case file; ConfigError lists every problem in it."""
    problems = _Problems(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise errors.ConfigError(f"{path}: cannot read the case: {exc}") from exc
    case = _parse(raw, path, problems)
    if problems.items or case is None:
        raise errors.ConfigError("invalid conformance case:\n  " + "\n  ".join(problems.items))
    return case


def load_cases(directory: Path = CASES_DIR, *, pattern: str = "*.yaml") -> tuple[Case, ...]:
    """Every case in ``directory``, sorted by id; ConfigError lists the problems of all files."""
    paths = sorted(directory.glob(pattern))
    if not paths:
        raise errors.ConfigError(f"no conformance cases matching {pattern} in {directory}")
    cases: list[Case] = []
    messages: list[str] = []
    for path in paths:
        try:
            cases.append(load_case(path))
        except errors.ConfigError as exc:
            messages.append(str(exc))
    if messages:
        raise errors.ConfigError("\n".join(messages))
    return tuple(sorted(cases, key=lambda c: c.id))
