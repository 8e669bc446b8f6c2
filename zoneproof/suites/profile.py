"""The certification profile: what ``zoneproof certify`` certifies, on which backend, judged how.

A YAML file (``apiVersion: zoneproof.dev/v1``, ``kind: CertificationProfile``; the
schema is in the README, a sample in ``certification/profile.example.yaml``)::

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
Paths are relative to the profile's directory. ``load`` reports every problem at once,
each with its fix; an unknown key names the valid ones (and the closest).
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoneproof import cluster, errors
from zoneproof._util import userfiles
from zoneproof.components.harness import kinds, options
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.kinds import Kind
from zoneproof.report.certification import Vendor
from zoneproof.slo import load_slos

__all__ = ["API_VERSION", "KIND", "NAMESPACES_PER_TEST", "BackendChoice", "Profile", "Scope",
           "load"]

API_VERSION = "zoneproof.dev/v1"
KIND = "CertificationProfile"
NAMESPACES_PER_TEST = kinds.NAMESPACES_PER_TEST
_VENDOR_KEYS = ("vendor", "product", "version", "contact")
_TOP = ("apiVersion", "kind", *_VENDOR_KEYS, "components", "slo", "backend")
_REQUIRED = ("apiVersion", "kind", *_VENDOR_KEYS, "components")
_BACKEND = ("name", "kubeconfig", "cluster_name", "allow_destructive", "options")
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


def _unknown(given: Mapping[str, Any], valid: tuple[str, ...], where: str) -> list[str]:
    found = []
    for key in sorted(set(map(str, given)) - set(valid)):
        close = difflib.get_close_matches(key, valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        found.append(f"{where}: unknown key {key!r}{hint}; valid keys: {', '.join(valid)}")
    return found


class _Reader:
    """Collects every problem of one profile while reading it."""

    def __init__(self, path: Path) -> None:
        self.path, self.base = path, path.parent
        self.problems: list[str] = []

    def file(self, value: object, where: str, fix: str) -> Path | None:
        if not isinstance(value, str) or not value:
            self.problems.append(f"{where}: give a file path, got {value!r}")
            return None
        path = (self.base / value).expanduser().resolve()
        if not path.is_file():
            self.problems.append(f"{where}: {path} is not a file; {fix}")
        return path

    def text(self, data: Mapping[str, Any], key: str, where: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            shown = userfiles.bounded(repr(value), chars=80)
            self.problems.append(f"{where}{key}: give a non-empty string, got {shown} (quote "
                                 f"it: {key}: \"...\")")
            return ""
        return value.strip()

    def mapping(self, value: object, where: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.problems.append(f"{where}: must be a mapping, got {type(value).__name__}")
            return {}
        return value

    # -- components ------------------------------------------------------------------------
    def component(self, kind: Kind, raw: object) -> Component:
        where = f"components.{kind}"
        data = dict(self.mapping(raw, where))
        for row in options.setting_rows(kind):
            data.pop(row.option.key, None)
        for key in options.path_keys():
            if isinstance(data.get(key), str):
                data[key] = str((self.base / data[key]).expanduser().resolve())
        try:
            component = Component.from_dict(data, kind)
        except errors.ConfigError as exc:
            self.problems.append(f"{where}: {exc}")
            return Component(kind)
        with contextlib.chdir(self.base):  # a relative program is relative to the profile
            self.problems += [f"{where}: {p}" for p in component.problems()]
        return component

    def settings(self, kind: Kind, raw: object, component: Component) -> dict[str, str]:
        data = self.mapping(raw, f"components.{kind}")
        told = {}
        for row in options.setting_rows(kind):
            given = str(data.get(row.option.key, row.option.default)).strip()
            value = told[row.option.key] = component.setting(row.option, given)
            if (problem := row.option.problem(value)) is not None:
                self.problems.append(f"components.{kind}.{row.option.key}: {problem}")
        return told

    # -- the rest ------------------------------------------------------------------------
    def slo(self, value: object) -> Path | None:
        if value is None:
            return None
        path = self.file(value, "slo", "give the SLO file (schema: zoneproof/slo/defaults.yaml) "
                         "or leave slo out for the defaults")
        if path is not None and path.is_file():
            try:
                load_slos(path)
            except errors.ConfigError as exc:
                self.problems.append(f"slo: {exc}")
        return path

    def backend(self, raw: object) -> BackendChoice:
        data = self.mapping(raw, "backend")
        self.problems += _unknown(data, _BACKEND, "backend")
        name = str(data.get("name", cluster.DEFAULT_BACKEND))
        if name not in cluster.backend_names():
            self.problems.append(f"backend.name: {name!r} is not installed; choose one of "
                                 f"{', '.join(cluster.backend_names())}")
            return BackendChoice(name)
        kubeconfig = None
        if "kubeconfig" in data:
            kubeconfig = self.file(data["kubeconfig"], "backend.kubeconfig",
                                   "give the cluster's kubeconfig")
        elif cluster.backend_type(name).traits.needs_kubeconfig:
            self.problems.append(f"backend.kubeconfig: the {name} backend needs the cluster's "
                                 "kubeconfig")
        allow = data.get("allow_destructive", False)
        if not isinstance(allow, bool):
            self.problems.append(f"backend.allow_destructive: true or false, got {allow!r}")
        options = {str(k): str(v) for k, v in self.mapping(data.get("options"), "backend.options"
                                                           ).items()}
        try:
            cluster.get_backend(name, kubeconfig=kubeconfig, allow_destructive=allow is True,
                                options=options)
        except errors.ConfigError as exc:
            self.problems.append(f"backend: {exc}")
        return BackendChoice(name, kubeconfig, str(data.get("cluster_name", _DEFAULT_CLUSTER)),
                             allow is True, options)


def load(path: Path) -> Profile:
    """Read and validate the profile at ``path``; ConfigError lists every problem and its fix."""
    path = path.expanduser().resolve()
    data = userfiles.load_yaml(path, "certification profile", "give a YAML profile (sample: "
                               "certification/profile.example.yaml)")
    if not isinstance(data, Mapping):
        raise errors.ConfigError(f"certification profile {path} must be a mapping "
                                 f"(apiVersion: {API_VERSION}, kind: {KIND}, ...)")
    read = _Reader(path)
    read.problems += _unknown(data, _TOP, "profile")
    read.problems += [f"{key}: missing (required keys: {', '.join(_REQUIRED)})"
                      for key in _REQUIRED if key not in data]
    if "apiVersion" in data and data["apiVersion"] != API_VERSION:
        read.problems.append(f"apiVersion: {data['apiVersion']!r} is not supported: write "
                             f"{API_VERSION}")
    if "kind" in data and data["kind"] != KIND:
        read.problems.append(f"kind: {data['kind']!r}: write {KIND}")
    vendor = Vendor(*(read.text(data, key, "") if key in data else "" for key in _VENDOR_KEYS))
    components = read.mapping(data.get("components"), "components")
    read.problems += _unknown(components, tuple(str(k) for k in kinds.every()), "components")
    named = tuple(k for k in kinds.every() if str(k) in components)
    if "components" in data and not named:
        read.problems.append(f"components: name at least one component under test "
                             f"({', '.join(kinds.every())}, e.g. source: command); a kind not "
                             "named is the reference's, standing in")
    chosen = [read.component(k, components[str(k)]) if k in named else Component(k)
              for k in kinds.every()]
    settings = Scope({str(c.kind): read.settings(c.kind, components.get(str(c.kind)), c)
                         for c in chosen})
    slo_file = read.slo(data.get("slo"))
    backend = read.backend(data.get("backend"))
    if backend.name in cluster.backend_names():
        capabilities = cluster.backend_type(backend.name).traits.capabilities
        if (reason := Components(*chosen).refusal(backend.name, capabilities,
                                                    flag="")) is not None:
            read.problems.append(f"components: {reason.replace('use backend', 'use backend.name')}")
    if read.problems:
        listed = "\n".join(f"  - {p}" for p in read.problems)
        raise errors.ConfigError(f"certification profile {path} has {len(read.problems)} "
                                 f"problem(s):\n{listed}")
    return Profile(path, vendor, Components(*chosen), settings, slo_file, backend, named)
