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
from zoneproof.specs.ha_config import configuration, facts
from zoneproof.specs.ha_config.payloads import JsonObject

__all__ = [
    "CASES_DIR",
    "UNSET",
    "Case",
    "ClusterShape",
    "Expectation",
    "Step",
    "Unset",
    "load_case",
    "load_cases",
]

CASES_DIR = Path(__file__).resolve().parents[3] / "conformance" / "ha_config" / "cases"
"""The cases shipped with the repository (a source checkout)."""

_API_VERSIONS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1",
                 "HorizontalPodAutoscaler": "autoscaling/v2"}
_ID = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_CASE_KEYS = {"id", "description", "spec", "namespace", "cluster", "hpas", "webhook", "object", "steps",
              "in_process_only"}
_EXPECT_KEYS = {"denied", "untouched", "replicas", "minReplicas", "maxReplicas",
                "topologySpreadConstraints", "affinity", "tolerations"}


class Unset(enum.Enum):
    """Marks an expectation field the case does not check."""

    UNSET = "unset"


UNSET = Unset.UNSET


@dataclass(frozen=True, slots=True)
class Expectation:
    """What must hold after a step; UNSET fields are not checked, None means "absent"."""

    denied: str | None = None
    """A substring of the denial message; the step must be refused."""
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
    """CREATE the case object, UPDATE it with a merge ``patch``, or change the Node count."""

    operation: Literal["CREATE", "UPDATE"] | None
    patch: JsonObject | None
    nodes: int | None
    expect: Expectation


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
    settings: configuration.Settings
    object: JsonObject
    steps: tuple[Step, ...]
    in_process_only: str | None
    path: Path

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


def _expectation(raw: object, where: str, problems: _Problems) -> Expectation:
    if not isinstance(raw, dict):
        problems.add(where, "must be a mapping")
        return Expectation()
    for key in sorted(set(raw) - _EXPECT_KEYS):
        problems.add(where, f"unknown key {key!r} (known: {', '.join(sorted(_EXPECT_KEYS))})")
    denied = raw.get("denied")
    if denied is not None and (not isinstance(denied, str) or not denied):
        problems.add(f"{where}.denied", "must be a non-empty message substring")
        denied = None
    if denied is not None and len(raw) > 1:
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
        denied=denied, untouched=untouched,
        replicas=_optional_int(raw, "replicas", where, problems),
        min_replicas=_optional_int(raw, "minReplicas", where, problems),
        max_replicas=_optional_int(raw, "maxReplicas", where, problems),
        topology_spread_constraints=UNSET if tscs is UNSET else _objects(
            tscs or [], f"{where}.topologySpreadConstraints", problems),
        affinity=affinity,
        tolerations=UNSET if tolerations is UNSET else _objects(
            tolerations or [], f"{where}.tolerations", problems),
    )
    if expectation == Expectation():
        problems.add(where, "checks nothing: give at least one expectation")
    return expectation


def _step(raw: object, where: str, problems: _Problems, first: bool) -> Step:
    if not isinstance(raw, dict):
        problems.add(where, "must be a mapping")
        return Step(None, None, None, Expectation())
    unknown = set(raw) - {"operation", "patch", "nodes", "expect"}
    for key in sorted(unknown):
        problems.add(where, f"unknown key {key!r} (known: operation, patch, nodes, expect)")
    operation, patch, nodes = raw.get("operation"), raw.get("patch"), raw.get("nodes")
    if (operation is None) == (nodes is None):
        problems.add(where, "needs exactly one of operation (CREATE/UPDATE) and nodes (a new Node count)")
    if operation not in (None, "CREATE", "UPDATE"):
        problems.add(f"{where}.operation", f"must be CREATE or UPDATE, got {operation!r}")
        operation = None
    if first and operation != "CREATE":
        problems.add(where, "the first step must be operation: CREATE")
    if patch is not None and (operation != "UPDATE" or not isinstance(patch, dict)):
        problems.add(f"{where}.patch", "only UPDATE steps take a patch, and it must be an object")
        patch = None
    return Step(operation=operation, patch=patch,
                nodes=None if nodes is None else _int(nodes, f"{where}.nodes", problems),
                expect=_expectation(raw.get("expect"), f"{where}.expect", problems))


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


def _settings(raw: object, problems: _Problems) -> configuration.Settings:
    known = ("notReadyTolerationSeconds", "unreachableTolerationSeconds")
    webhook = raw or {}
    if not isinstance(webhook, dict) or set(webhook) - set(known):
        problems.add("webhook", f"only {' and '.join(known)} are known")
        return configuration.Settings()
    not_ready, unreachable = (None if webhook.get(k) is None else _int(webhook[k], f"webhook.{k}", problems)
                              for k in known)
    return configuration.Settings(not_ready, unreachable)


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
    in_process_only = raw.get("in_process_only")
    if in_process_only is not None and not isinstance(in_process_only, str):
        problems.add("in_process_only", "must be a string giving the reason")
        in_process_only = None
    obj = _object(raw.get("object"), problems)
    steps = tuple(_step(s, f"steps[{i}]", problems, i == 0)
                  for i, s in enumerate(_list(raw, "steps", problems, required=True)))
    if any(s.nodes is not None for s in steps) and obj.get("kind") not in ("Deployment", "StatefulSet"):
        problems.add("steps", "nodes steps need a Deployment or StatefulSet")
    return Case(
        id=str(raw.get("id")), description=str(raw.get("description")), spec=str(raw.get("spec")),
        namespace=facts.NamespaceInfo(
            f"hac-{path.stem}"[:63].rstrip("-"),
            _str_map(namespace.get("labels"), "namespace.labels", problems),
            _str_map(namespace.get("annotations"), "namespace.annotations", problems)),
        cluster=_cluster(raw.get("cluster"), problems),
        hpas=tuple(h for i, item in enumerate(_list(raw, "hpas", problems))
                   if (h := _hpa(item, f"hpas[{i}]", problems))),
        settings=_settings(raw.get("webhook"), problems), object=obj, steps=steps,
        in_process_only=in_process_only, path=path)


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
