"""The certification profile: what ``zoneproof certify`` certifies, on which backend, judged how.

A YAML file (``apiVersion: zoneproof.dev/v1``, ``kind: CertificationProfile``; a sample
in ``certification/profile.example.yaml``)::

    vendor / product / version / contact     who asks, for what (strings)
    components:                               at least one kind; one not named is the
      webhook:    source registered (name, variant) | command (command) | url (url, ca_bundle)
                  | in-cluster (manifests DIR, image_archive TAR; neither: the reference's)
      controller: source registered | command | in-cluster; selector, lease (NAMESPACE/NAME),
                  namespaces                  reference's, standing in (not certified)
    slo: FILE                                 SLO file (default: zoneproof's defaults)
    backend: {name, kubeconfig, cluster_name, allow_destructive, options}

A component's keys are the component's one serialization form (``Component.from_dict``)
and its kind's settings, both from the one option table (``components.harness.options``).
Paths are relative to the profile's directory. The file's shape is the pydantic model
``ProfileFile`` (``model()``: its component entries generated from the option table); its JSON Schema
ships as ``profile.schema.json`` beside this module (``make schemas``; a unit test holds the
two equal). ``load`` reports every problem at once, each with its place and fix (an unknown
key names the valid ones and the closest), then checks what a schema cannot.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic

from zoneproof import cluster, errors
from zoneproof._util import schemas, userfiles
from zoneproof.components.harness import kinds, options, source
from zoneproof.components.harness.component import REGISTRATION, Component, Components
from zoneproof.components.harness.kinds import Kind
from zoneproof.report.certification import Vendor
from zoneproof.slo import load_slos

__all__ = ["API_VERSION", "KIND", "NAMESPACES_PER_TEST", "SCHEMA_FILE", "BackendChoice",
           "BackendSection", "Profile", "ProfileFile", "Scope", "json_schema", "load", "model"]

API_VERSION = "zoneproof.dev/v1"
KIND = "CertificationProfile"
NAMESPACES_PER_TEST = kinds.NAMESPACES_PER_TEST
_DEFAULT_CLUSTER = "zoneproof-certify"


@dataclass(frozen=True, slots=True)
class Scope:
    """What the components under test are told: kind → setting → value (every setting of
    every kind, the defaults where the profile gives none)."""

    values: Mapping[str, Mapping[str, str]]

    def of(self, kind: str) -> Mapping[str, str]:
        """The settings of ``kind``."""
        return self.values[kind]

    def pytest_args(self) -> list[str]:
        """The plugin options that tell the suite."""
        return options.setting_args(self.values)


@dataclass(frozen=True, slots=True)
class BackendChoice:
    """The backend to certify on (its kubeconfig for ``existing``)."""

    name: str = cluster.DEFAULT_BACKEND
    kubeconfig: Path | None = None
    cluster_name: str = _DEFAULT_CLUSTER
    allow_destructive: bool = False
    options: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """For certification.yaml."""
        return {"name": self.name, "cluster_name": self.cluster_name,
                "kubeconfig": str(self.kubeconfig) if self.kubeconfig else None,
                "allow_destructive": self.allow_destructive, "options": dict(self.options)}


@dataclass(frozen=True, slots=True)
class Profile:
    """A validated certification profile."""

    source: Path
    vendor: Vendor
    components: Components
    scope: Scope
    slo_file: Path | None
    backend: BackendChoice
    under_test: tuple[Kind, ...] = ()
    """The kinds the profile names: the certification is about them; the reference of
    every other kind stands in for it."""

    @property
    def stand_ins(self) -> tuple[Kind, ...]:
        """The kinds whose reference stands in (not certified)."""
        return tuple(k for k in kinds.every() if k not in self.under_test)


_Text = Annotated[str, pydantic.StringConstraints(strip_whitespace=True, min_length=1)]
_STRICT = pydantic.ConfigDict(extra="forbid", strict=True)


class BackendSection(pydantic.BaseModel):
    """backend: the backend to certify on."""

    model_config = _STRICT

    name: _Text = pydantic.Field(default=cluster.DEFAULT_BACKEND, description="an installed backend: "
                                 f"{', '.join(cluster.backend_names())}")
    kubeconfig: _Text | None = pydantic.Field(default=None, description="the cluster's kubeconfig "
                                              "(existing), relative to the profile")
    cluster_name: _Text = pydantic.Field(default=_DEFAULT_CLUSTER, description="the bed's name")
    allow_destructive: bool = pydantic.Field(default=False, description="existing: allow faults on a "
                                             "cluster zoneproof did not make")
    options: dict[str, str | int | float | bool] = pydantic.Field(
        default_factory=dict, description="the backend's own options (zoneproof up --help)")


@functools.cache
def _component_model(kind: Kind, registered: tuple[type[source.Source], ...]
                     ) -> type[pydantic.BaseModel]:
    """The keys of a component of ``kind`` in a profile: its source, the keys of every source
    (``Component.from_dict`` checks they are its source's, and that it delivers ``kind``),
    and ``kind``'s settings."""
    delivering = [s.name for s in registered if s.delivers(kind)]
    fields: dict[str, Any] = {"source": (_Text | None, pydantic.Field(default=None, description=(
        f"where the {kind} comes from: {', '.join(delivering)} (default: "
        f"{source.default(source.Where.HOST).name})")))}
    found = [o for s in registered for o in s.options]
    found += [REGISTRATION] if kind.spec.serves else []
    found += list(kind.spec.settings)
    for option in found:
        text = option.help.format(kind=kind, title=kind.spec.title,
                                  allowed=kinds.placeholders(kind))
        fields.setdefault(option.key, (_Text | None, pydantic.Field(default=None,
                                                                    description=text)))
    return pydantic.create_model(f"{str(kind).title()}Component", __config__=_STRICT,
                                 __doc__=f"components.{kind}: {kind.spec.title}", **fields)


class ProfileFile(pydantic.BaseModel):
    """A certification profile as written (``certification/profile.example.yaml``); ``model()``
    is it with the components of the registered kinds and sources. ``load`` checks what a
    schema cannot (files exist, the backend is installed and can run the components)."""

    model_config = pydantic.ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    api_version: Literal["zoneproof.dev/v1"] = pydantic.Field(alias="apiVersion")
    kind: Literal["CertificationProfile"]
    vendor: _Text = pydantic.Field(description="who asks for the certification")
    product: _Text = pydantic.Field(description="what is certified")
    version: _Text = pydantic.Field(description="its version (quote it: \"1.0\")")
    contact: _Text = pydantic.Field(description="whom to ask about it")
    components: pydantic.BaseModel = pydantic.Field(description="one entry per component under "
                                                    "test")
    slo: _Text | None = pydantic.Field(default=None, description="an SLO file overriding the "
                                       "defaults by name (slo-file.schema.json), relative to "
                                       "the profile")
    backend: BackendSection | None = None


@functools.cache
def _model(registered: tuple[type[source.Source], ...], every: tuple[Kind, ...]
           ) -> type[ProfileFile]:
    fields: dict[str, Any] = {str(k): (_component_model(k, registered) | None, None)
                              for k in every}
    components = pydantic.create_model(
        "ProfileComponents", __config__=_STRICT, __doc__="Name one kind or more: a kind left "
        "out is the reference's, standing in (not certified).", **fields)
    return pydantic.create_model("CertificationProfile", __base__=ProfileFile,
                                 __doc__=ProfileFile.__doc__,
                                 components=(components, pydantic.Field(
                                     description="one entry per component under test")))


def model() -> type[ProfileFile]:
    """``ProfileFile`` with the components of the registered kinds and sources."""
    return _model(source.registered(), kinds.every())


#: The JSON Schema of a profile, shipped in the package (and in docs/reference/schemas/).
SCHEMA_FILE = Path(__file__).with_name("profile.schema.json")


def json_schema() -> str:
    """``model()``'s JSON Schema as ``SCHEMA_FILE`` holds it (what ``make schemas`` writes)."""
    return schemas.json_schema(model())


class _Reader:
    """Collects every problem of one profile the schema let through while reading it."""

    def __init__(self, path: Path) -> None:
        self.path, self.base = path, path.parent
        self.problems: list[str] = []

    def file(self, value: str, where: str, fix: str) -> Path:
        path = (self.base / value).expanduser().resolve()
        if not path.is_file():
            self.problems.append(f"{where}: {path} is not a file; {fix}")
        return path

    # -- components ------------------------------------------------------------------------
    def component(self, kind: Kind, data: dict[str, str]) -> Component:
        where = f"components.{kind}"
        data = {k: v for k, v in data.items()
                if k not in {r.option.key for r in options.setting_rows(kind)}}
        for key in options.path_keys():
            if key in data:
                data[key] = str((self.base / data[key]).expanduser().resolve())
        try:
            component = Component.from_dict(data, kind)
        except errors.ConfigError as exc:
            self.problems.append(f"{where}: {exc}")
            return Component(kind)
        with contextlib.chdir(self.base):  # a relative program is relative to the profile
            self.problems += [f"{where}: {p}" for p in component.problems()]
        return component

    def settings(self, kind: Kind, data: dict[str, str], component: Component) -> dict[str, str]:
        told = {}
        for row in options.setting_rows(kind):
            given = data.get(row.option.key, row.option.default)
            value = told[row.option.key] = component.setting(row.option, given)
            if (problem := row.option.problem(value)) is not None:
                self.problems.append(f"components.{kind}.{row.option.key}: {problem}")
        return told

    # -- the rest ------------------------------------------------------------------------
    def slo(self, value: str) -> Path:
        path = self.file(value, "slo", "give the SLO file (schema: slo-file.schema.json) "
                         "or leave slo out for the defaults")
        if path.is_file():
            try:
                load_slos(path)
            except errors.ConfigError as exc:
                self.problems.append(f"slo: {exc}")
        return path

    def backend(self, given: BackendSection) -> BackendChoice:
        name = given.name
        if name not in cluster.backend_names():
            self.problems.append(f"backend.name: {name!r} is not installed; choose one of "
                                 f"{', '.join(cluster.backend_names())}")
            return BackendChoice(name)
        kubeconfig = None
        if given.kubeconfig is not None:
            kubeconfig = self.file(given.kubeconfig, "backend.kubeconfig",
                                   "give the cluster's kubeconfig")
        elif cluster.backend_type(name).traits.needs_kubeconfig:
            self.problems.append(f"backend.kubeconfig: the {name} backend needs the cluster's "
                                 "kubeconfig")
        choice = BackendChoice(name, kubeconfig, given.cluster_name, given.allow_destructive,
                               {k: str(v) for k, v in given.options.items()})
        try:
            cluster.get_backend(name, kubeconfig=kubeconfig, allow_destructive=choice.allow_destructive,
                                options=choice.options)
        except errors.ConfigError as exc:
            self.problems.append(f"backend: {exc}")
        return choice


def _refused(path: Path, problems: list[str]) -> errors.ConfigError:
    listed = "\n".join(f"  - {p}" for p in problems)
    return errors.ConfigError(f"certification profile {path} has {len(problems)} "
                              f"problem(s):\n{listed}")


def load(path: Path) -> Profile:
    """Read and validate the profile at ``path``; ConfigError lists every problem and its fix:
    those of its shape (``model()``), and those of its values in every part whose shape is
    right."""
    path = path.expanduser().resolve()
    data = userfiles.load_yaml(path, "certification profile", "give a YAML profile (sample: "
                               "certification/profile.example.yaml)")
    if not isinstance(data, Mapping):
        raise errors.ConfigError(f"certification profile {path} must be a mapping "
                                 f"(apiVersion: {API_VERSION}, kind: {KIND}, ...)")
    shape, read = model(), _Reader(path)
    bad: list[tuple[int | str, ...]] = []
    try:
        given: ProfileFile | None = shape.model_validate(data)
    except pydantic.ValidationError as exc:
        given, bad = None, [tuple(e["loc"]) for e in exc.errors()]
        read.problems += schemas.problems(exc, shape)

    def right(*loc: str) -> bool:  # no problem of its shape in or around ``loc``
        return not any(b[:len(loc)] == loc or loc[:len(b)] == b for b in bad)

    raw = data.get("components")
    named = tuple(k for k in kinds.every() if isinstance(raw, Mapping) and str(k) in raw)
    if isinstance(raw, Mapping) and not named:
        read.problems.append(f"components: name at least one component under test "
                             f"({', '.join(kinds.every())}, e.g. source: command); a kind not "
                             "named is the reference's, standing in")
    entries: dict[Kind, dict[str, str]] = {}
    for kind in named:
        if right("components", kind) and isinstance(raw, Mapping):
            entry = _component_model(kind, source.registered()).model_validate(raw[kind] or {})
            entries[kind] = entry.model_dump(exclude_none=True)
    chosen = [read.component(k, entries[k]) if k in entries else Component(k)
              for k in kinds.every()]
    settings = Scope({str(c.kind): read.settings(c.kind, entries.get(c.kind, {}), c)
                      for c in chosen})
    slo = data.get("slo")
    slo_file = read.slo(slo.strip()) if right("slo") and isinstance(slo, str) else None
    backend = read.backend(BackendSection.model_validate(data.get("backend") or {})) \
        if right("backend") else BackendChoice()
    if right("backend") and len(entries) == len(named) and backend.name in cluster.backend_names():
        capabilities = cluster.backend_type(backend.name).traits.capabilities
        if (reason := Components(*chosen).refusal(backend.name, capabilities,
                                                    flag="")) is not None:
            read.problems.append(f"components: {reason.replace('use backend', 'use backend.name')}")
    if read.problems or given is None:
        raise _refused(path, read.problems)
    vendor = Vendor(given.vendor, given.product, given.version, given.contact)
    return Profile(path, vendor, Components(*chosen), settings, slo_file, backend, named)
