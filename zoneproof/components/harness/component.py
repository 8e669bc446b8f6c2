"""The component under test: a registered kind and a source, one value for every kind.

Its kind (``kinds``: the webhook, the HA controller) says what the suite knows of it; its
source (``source``: a registered implementation and its variant, a vendor's command, a
URL, in-cluster manifests + image archive, or any other registered source) says where it
comes from, what is wrong with it and how it starts. A webhook is registered with its
``registration_file`` (the vendor's own MutatingWebhookConfiguration; the suite names it
and fills in each entry's clientConfig, see ``specs.ha_config.registration.adopt``) or
else with the spec's §3 configuration, with the selection its registered variant wants.
``Components`` holds one component of every registered kind (each the reference unless
chosen); ``options`` makes them from the options a user gave.

``to_dict``/``from_dict`` is the one form a component crosses a process boundary in
(pytest options, chaos experiment configuration, qualify and mutants).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from zoneproof import errors
from zoneproof.cluster import registry as backends
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import kinds, registry, source
from zoneproof.components.harness.kinds import Kind, placeholders
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Launcher, Source, Where
from zoneproof.specs.ha_config import registration

__all__ = ["REFERENCE_MANIFESTS", "REGISTRATION", "Component", "Components"]

#: The reference's manifests of each kind (subdirectories of deploy/).
REFERENCE_MANIFESTS: Mapping[Kind, Path] = {k: k.spec.manifests for k in kinds.every()}
#: A webhook's own MutatingWebhookConfiguration (kinds that serve admission).
REGISTRATION = Option("registration_file", "the webhook's own MutatingWebhookConfiguration "
                      "(YAML/JSON), registered under the suite's name with each entry's "
                      "clientConfig filled in (default: the spec's §3 configuration)",
                      metavar="FILE", flag="registration", path=True)
_VARIANT = "variant"
T = TypeVar("T")


def _default_source() -> Source:
    """The registry's default source of host components (the reference), read when a
    component is made (not at import: the sources are entry points)."""
    return source.default(Where.HOST)()


@dataclass(frozen=True, slots=True)
class Component:
    """One component under test."""

    kind: Kind
    source: Source = field(default_factory=_default_source)
    registration_file: Path | None = None
    """A webhook's own MutatingWebhookConfiguration (YAML/JSON); None: the spec's §3."""

    # -- what it is ----------------------------------------------------------------------
    @property
    def source_name(self) -> str:
        """The source's registered name (``registered``, ``command``, ``url``, ...)."""
        return self.source.name

    @property
    def where(self) -> Where:
        """Where it runs: host processes (or an endpoint), or in-cluster workloads."""
        return self.source.where

    @property
    def mode(self) -> str:
        """``where`` as text (``host``, ``in-cluster``)."""
        return str(self.source.where)

    @property
    def implementation(self) -> registry.Implementation | None:
        """The registered implementation whose variants it runs (None: none)."""
        return self.source.implementation(self.kind)

    @property
    def variant(self) -> str | None:
        """The registered variant it runs (None: its source has none)."""
        return self.source.variant

    @property
    def template(self) -> str:
        """The command template the suite starts ('' when it starts none)."""
        return self.source.command(self.kind) if self.runs_command else ""

    @property
    def runs_command(self) -> bool:
        """True when the suite starts it from a command (and so can restart it)."""
        try:
            self.source.command(self.kind)
        except errors.ConfigError:
            return False
        return True

    @property
    def external(self) -> bool:
        """True when it runs elsewhere (the suite cannot start or stop it)."""
        return self.source.external

    def label(self) -> str:
        """A short human description for messages."""
        return self.source.label(self.kind)

    def fixed(self) -> Mapping[str, str]:
        """Settings it fixes itself (an in-cluster controller's Lease: its manifests')."""
        return self.source.fixed(self.kind)

    def setting(self, option: Option, given: str) -> str:
        """The value of the setting ``option`` for it: ``given``, or when that is the
        option's default, the value its source fixes (if any)."""
        return self.fixed().get(option.key, given) if not option.given(given) else given

    # -- validation ----------------------------------------------------------------------
    def problems(self) -> list[str]:
        """What is wrong with this component (empty when valid)."""
        found = self.source.problems(self.kind)
        if not self.source.delivers(self.kind) and not found:
            found.append(f"a {self.kind} cannot come from the {self.source.name} source")
        if self.registration_file is not None:
            found += self._registration_problems(self.registration_file)
        return found

    def _registration_problems(self, path: Path) -> list[str]:
        if not self.kind.spec.serves:
            serving = " or ".join(k for k in kinds.every() if k.spec.serves)
            return [f"a {self.kind} has no registration file: only a {serving} is registered"]
        if self.source.registers_itself:
            return [f"the {self.label()} is registered by its own manifests: drop the "
                    "registration file (put the MutatingWebhookConfiguration in them)"]
        if not path.is_file():
            return [f"webhook registration {path} is not a file: give the path of your "
                    "MutatingWebhookConfiguration (YAML or JSON)"]
        try:
            registration.load_file(path)
        except errors.ConfigError as exc:
            return [str(exc)]
        return []

    def validate(self) -> Component:
        """This component; ConfigError naming every problem."""
        if found := self.problems():
            raise errors.ConfigError("; ".join(found))
        return self

    # -- starting and registering ----------------------------------------------------------
    def start(self, launcher: Launcher[Component, T]) -> T:
        """Start it through its kind's ``launcher``, the way its source delivers it."""
        return self.source.start(self, launcher)

    def argv(self, values: Mapping[str, object], extra_args: tuple[str, ...] = ()) -> list[str]:
        """The command line: the template with ``values`` (quoted) filled in, then ``extra_args``."""
        template = self.source.command(self.kind)
        filled = {k: shlex.quote(str(v)) for k, v in values.items()}
        if self.variant is not None:
            filled[_VARIANT] = shlex.quote(self.variant)
        try:
            text = template.format(**filled)
        except (KeyError, IndexError) as exc:
            raise errors.ConfigError(f"{self.kind} command has unknown placeholder {exc}: use "
                                     f"{placeholders(self.kind)}") from None
        return [*shlex.split(text), *extra_args]

    def selection(self) -> registration.Selection:
        """What the webhook's registration selects: its registered variant's, else the spec's."""
        implementation = self.implementation
        if implementation is None or self.variant is None:
            return registration.SPEC
        return implementation.selection_of(self.variant)

    # -- variants --------------------------------------------------------------------------
    def cannot_be(self, variant: str) -> str | None:
        """Why this component cannot be started as ``variant`` (None: it can)."""
        return self.source.cannot_be(self.kind, variant)

    def with_variant(self, variant: str) -> Component:
        """The same registered implementation started as ``variant``."""
        return replace(self, source=self.source.with_variant(self.kind, variant))

    # -- one serialization form ----------------------------------------------------------
    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (inverse of ``from_dict``)."""
        out = {"kind": str(self.kind), "source": self.source.name, **self.source.to_dict()}
        if self.registration_file is not None:
            out["registration_file"] = str(self.registration_file)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], kind: Kind | None = None) -> Component:
        """Read ``to_dict``'s form (``source`` defaults to ``registered``); ConfigError names
        the bad key and the valid ones. Not validated: call ``validate``."""
        if not isinstance(data, Mapping):
            raise errors.ConfigError(f"a component is a mapping, got {data!r}")
        raw_kind = data.get("kind", kind)
        if kind is not None and raw_kind != kind:
            raise errors.ConfigError(f"component kind {raw_kind!r}: expected {kind}")
        found_kind = kinds.get(str(raw_kind))
        chosen = source.get(str(data.get("source", source.default(Where.HOST).name)))
        valid = ("kind", "source", *chosen.keys(), REGISTRATION.key)
        if unknown := sorted(set(data) - set(valid)):
            raise errors.ConfigError(f"unknown key(s) {', '.join(unknown)} of a {chosen.name} "
                                     f"component: valid keys are {', '.join(valid)}")
        text = {k: str(v) for k, v in data.items()}
        if missing := [o.key for o in chosen.options if o.required and o.key not in text]:
            raise errors.ConfigError(f"a {chosen.name} component needs {', '.join(missing)}")
        file = text.get(REGISTRATION.key)
        return cls(found_kind, chosen.from_dict(text, found_kind), Path(file) if file else None)


class Components:
    """One component under test of every registered kind (each defaults to the reference).

    ``Components(webhook=..., controller=...)`` or ``Components(a, b)`` (each at its kind).
    """

    __slots__ = ("_by_kind",)

    def __init__(self, *chosen: Component, **by_kind: Component) -> None:
        given: dict[Kind, Component] = {}
        for name, made in by_kind.items():
            if made.kind != kinds.get(name):
                raise errors.ConfigError(f"Components({name}=) got the {made.kind} "
                                         f"{made.label()}: components of the wrong kinds")
            given[kinds.get(name)] = made
        for made in chosen:
            if made.kind in given:
                raise errors.ConfigError(f"Components got two {made.kind}s")
            given[made.kind] = made
        self._by_kind = {kind: given.get(kind, Component(kind)) for kind in kinds.every()}

    def __getitem__(self, kind: str) -> Component:
        return self._by_kind[kinds.get(kind)]

    def __iter__(self) -> Iterator[Component]:
        return iter(self._by_kind.values())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Components) and other._by_kind == self._by_kind

    def __hash__(self) -> int:
        return hash(tuple(self._by_kind.values()))

    def __repr__(self) -> str:
        return f"Components({', '.join(f'{k}={c!r}' for k, c in self._by_kind.items())})"

    @property
    def webhook(self) -> Component:
        """The webhook under test."""
        return self[Kind.WEBHOOK]

    @property
    def controller(self) -> Component:
        """The HA controller under test."""
        return self[Kind.CONTROLLER]

    def problems(self) -> list[str]:
        """What is wrong with any of them."""
        return [p for component in self for p in component.problems()]

    def refusal(self, backend: str, capabilities: frozenset[Capability], flag: str = "--"
                ) -> str | None:
        """Why these components cannot run on ``backend`` with ``capabilities`` (None: they
        can): a source may need what a backend offers, e.g. in-cluster ones need clusters
        that load image archives (``flag``: the options' prefix, for the fix)."""
        for where in Where:
            lacking = [c for c in self if c.where is where and c.source.requires - capabilities]
            if not lacking:
                continue
            missing = sorted({cap for c in lacking for cap in c.source.requires - capabilities},
                             key=lambda cap: cap.value)
            able = [name for name in backends.names()
                    if all(cap in backends.backend_type(name).traits.capabilities
                           for cap in missing)]
            others = " or ".join(f"{flag}components {w}" for w in Where if w is not where)
            return (f"{flag}components {where}: the {backend} backend cannot "
                    f"{' nor '.join(_CANNOT.get(cap, cap.value) for cap in missing)}, so the "
                    f"{' and the '.join(c.label() for c in lacking)} cannot run there: use "
                    f"{flag}backend {' or '.join(able) or 'another'}, or {others}")
        return None

    def to_dict(self) -> dict[str, dict[str, str]]:
        """JSON-ready form (inverse of ``from_dict``)."""
        return {str(kind): component.to_dict() for kind, component in self._by_kind.items()}

    def to_json(self) -> str:
        """``to_dict`` as compact JSON (for a command-line option)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str | None) -> Components:
        """Read ``to_dict``'s form, or its JSON text; a missing kind is the reference."""
        if isinstance(data, str):
            try:
                data = json.loads(data) if data.strip() else {}
            except json.JSONDecodeError as exc:
                raise errors.ConfigError(f"components are not valid JSON ({exc}): {data!r}") from None
        data = data or {}
        names = [str(k) for k in kinds.every()]
        if not isinstance(data, Mapping) or set(data) - set(names):
            raise errors.ConfigError(f"components must map {' and/or '.join(map(repr, names))} "
                                     f"to a component, got {data!r}")
        return cls(*(Component.from_dict(data[kind], kinds.get(kind)) for kind in data))


#: What a backend lacking a capability cannot do, for a refusal.
_CANNOT = {Capability.LOAD_IMAGES: "load image archives into its nodes (it runs no pods from them)"}

