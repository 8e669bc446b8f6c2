"""The component options as one table: the command line, the pytest plugin and the
certification profile are made from it.

A row is one option of one registered kind, made from the registered sources and kinds:
the options of every source that delivers the kind (``--webhook-command``,
``--webhook-url``, ``--webhook-ca-bundle``...), its registration file when it serves
admission, and the settings the suite tells it (``--controller-selector``...). Every
row is ``--<kind>-<flag>`` on the command line, ``--zp-<kind>-<flag>`` with the ini twin
``zp_<kind>_<flag>`` in pytest, and ``components.<kind>.<key>`` in a profile; plus
``components`` itself (where they run: host or in-cluster; in pytest also every
component as JSON). ``choose`` reads a kind's rows back into a component, naming the
options that conflict.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from zoneproof import errors
from zoneproof.components.harness import kinds, source
from zoneproof.components.harness.component import REGISTRATION, Component, Components
from zoneproof.components.harness.kinds import Kind, placeholders
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Source, Where

__all__ = ["COMPONENTS", "Row", "add_arguments", "choose", "chosen", "explicit",
           "from_choices", "from_options", "path_keys", "pytest_options", "rows", "setting",
           "setting_args", "setting_rows", "settings_given"]

COMPONENTS = "components"
"""The option saying where the components run (pytest: or all of them as JSON)."""
_SOURCE, _COMPONENT, _SETTING = "source", "component", "setting"


@dataclass(frozen=True, slots=True)
class Row:
    """One option of one kind."""

    kind: Kind
    option: Option
    part: str
    """``source`` (a key of its owners), ``component`` (the registration file) or
    ``setting`` (what the suite tells the component)."""
    owners: tuple[type[Source], ...] = ()
    """The sources that take it."""

    @property
    def name(self) -> str:
        """``<kind>-<flag>``: the option without its prefix."""
        return f"{self.kind}-{self.option.name}"

    @property
    def dest(self) -> str:
        """``<kind>_<flag>``: its Python name (argparse, ini)."""
        return self.name.replace("-", "_")

    @property
    def argument(self) -> str:
        """``<flag>`` with underscores: its keyword of ``from_choices``."""
        return self.option.name.replace("-", "_")

    @property
    def where(self) -> Where | None:
        """Where the components that take it run (None: anywhere)."""
        found = {owner.where for owner in self.owners}
        return found.pop() if len(found) == 1 else None

    def flags(self, prefix: str) -> list[str]:
        """Its spellings with ``prefix`` (``--``, ``--zp-``), the current one first."""
        return [f"{prefix}{self.kind}-{name}" for name in (self.option.name, *self.option.aliases)]

    def help(self) -> str:
        """Its help text for its kind."""
        return self.option.help.format(kind=self.kind, title=self.kind.spec.title,
                                       allowed=placeholders(self.kind))


@functools.cache
def rows(kind: str) -> tuple[Row, ...]:
    """Every option of ``kind``: its sources', its registration file's, its settings."""
    found = kinds.get(kind)
    keyed: dict[str, tuple[Option, list[type[Source]]]] = {}
    delivering = [s for s in source.registered() if s.delivers(found)]
    for owner in delivering:
        for option in owner.options:
            if option.flags:  # the others are keys of the dict form only
                keyed.setdefault(option.key, (option, []))[1].append(owner)
    out = [Row(found, option, _SOURCE, tuple(owners)) for option, owners in keyed.values()]
    if found.spec.serves:
        out.append(Row(found, REGISTRATION, _COMPONENT,
                       tuple(s for s in delivering if not s.registers_itself)))
    out += [Row(found, option, _SETTING) for option in found.spec.settings]
    return tuple(out)


def _flagged(kind: str, *parts: str) -> list[Row]:
    return [r for r in rows(kind) if r.option.flags and r.part in parts]


def setting_rows(kind: str) -> tuple[Row, ...]:
    """The settings of ``kind`` (flagged or not)."""
    return tuple(r for r in rows(kind) if r.part == _SETTING)


def path_keys() -> tuple[str, ...]:
    """The keys of a component's dict form, of any source, whose values are paths."""
    every = [o for s in source.registered() for o in s.options] + [REGISTRATION]
    return tuple(dict.fromkeys(o.key for o in every if o.path))


# -- the command line -------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--components`` and every kind's options, in one group."""
    group = parser.add_argument_group("components under test (default: the reference ones)")
    group.add_argument(f"--{COMPONENTS}", default=Where.HOST, choices=tuple(Where),
                       help=f"{Where.HOST}: host processes (or a URL); {Where.IN_CLUSTER}: "
                            "deployed by manifests + image archive (backends that load "
                            "images: kind); default: %(default)s")
    for kind in kinds.every():
        for row in _flagged(kind, _SOURCE, _COMPONENT, _SETTING):
            group.add_argument(*row.flags("--"), dest=row.dest, default="",
                               metavar=row.option.metavar, help=row.help())


def chosen(args: argparse.Namespace) -> Components:
    """The components the command line chose."""
    return from_options(lambda name: str(getattr(args, name.replace("-", "_"), "") or ""),
                        args.components, flag="--")


def settings_given(args: argparse.Namespace) -> list[str]:
    """The settings the command line gave, as the pytest options that tell the suite;
    ConfigError names a bad one."""
    found = []
    for kind in kinds.every():
        for row in _flagged(kind, _SETTING):
            if row.option.given(value := str(getattr(args, row.dest, "") or "")):
                if (problem := row.option.problem(value)) is not None:
                    raise errors.ConfigError(f"{row.flags('--')[0]} {problem}")
                found.append(f"--zp-{row.name}={value}")
    return found


# -- pytest -----------------------------------------------------------------------------------
def pytest_options() -> list[tuple[list[str], str, str]]:
    """(names without ``--zp-``, the current first; default; help) of every component option."""
    found = [([COMPONENTS], str(Where.HOST),
              f"{Where.HOST}: components under test run as host processes; {Where.IN_CLUSTER}: "
              "deployed by their manifests and image archive (backends that load images: "
              "kind), by default the reference's deploy/ and `zoneproof build --images`; or "
              "every component as JSON (" + ", ".join(f'"{k}": {{...}}' for k in kinds.every())
              + "; zoneproof.components.harness.component; what qualify and mutants pass) "
              "instead of the per-kind options")]
    for kind in kinds.every():
        found += [([n.removeprefix("--zp-") for n in row.flags("--zp-")], row.option.default,
                   row.help()) for row in _flagged(kind, _SOURCE, _COMPONENT, _SETTING)]
    return found


def explicit(value: Callable[[str], str], prefix: str = "--zp-") -> list[str]:
    """The per-kind component options given (``value``: by name without the prefix)."""
    return [row.flags(prefix)[0] for kind in kinds.every()
            for row in _flagged(kind, _SOURCE, _COMPONENT) if row.option.given(value(row.name))]


def from_options(value: Callable[[str], str], mode: str, flag: str = "--zp-") -> Components:
    """The components the per-kind options choose (``value``: by name without the prefix)."""
    return Components(*(choose(kind, {r.argument: value(r.name)
                                      for r in _flagged(kind, _SOURCE, _COMPONENT)},
                               mode=mode, flag=flag) for kind in kinds.every()))


# -- settings ---------------------------------------------------------------------------------
def setting(component: Component, key: str, given: str) -> str:
    """The value of ``component``'s setting ``key``: ``given``, or its source's own when
    ``given`` is the default (an in-cluster controller's Lease is its manifests')."""
    (row,) = [r for r in setting_rows(component.kind) if r.option.key == key]
    return component.setting(row.option, given)


def setting_args(values: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The pytest options that tell the suite ``values`` (kind → setting key → value)."""
    return [f"--zp-{row.name}={values[kind][row.option.key]}" for kind in kinds.every()
            for row in _flagged(kind, _SETTING) if row.option.key in values.get(kind, {})]


# -- choosing a component -----------------------------------------------------------------------
def from_choices(kind: str, *, mode: str = Where.HOST, flag: str = "--zp-",
                 **values: str) -> Component:
    """``choose`` with the options as keywords (flag names with underscores)."""
    return choose(kind, values, mode=mode, flag=flag)


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def choose(kind: str, values: Mapping[str, str], *, mode: str = Where.HOST,
           flag: str = "--zp-") -> Component:
    """The component the options ``values`` (flag → value, underscores for dashes) choose.

    Nothing given: the reference, as host processes or (``mode`` ``in-cluster``) from its
    manifests and images. An option that selects a source (``command``, ``url``,
    ``manifests``...) chooses it; ``flag``: the options' prefix, for messages. ConfigError
    names the options that conflict and the fix.
    """
    found = kinds.get(kind)
    table = [r for r in rows(found) if r.part != _SETTING]
    by_name = {r.argument: r for r in table}
    for name in values:
        if name not in by_name:
            elsewhere = [r for k in kinds.every() for r in rows(k)
                         if k != found and r.argument == name]
            if not elsewhere:
                raise errors.ConfigError(f"unknown {found} option {name!r}: choose from "
                                         f"{', '.join(by_name)}")
            raise errors.ConfigError(f"a {found} has no {name}: {elsewhere[0].flags(flag)[0]} "
                                     f"belongs to the {elsewhere[0].kind}")
    if mode not in tuple(Where):
        raise errors.ConfigError(f"{flag}{COMPONENTS} {mode!r}: choose "
                                 f"{' or '.join(Where)} (or give the components as JSON)")
    where = Where(mode)
    given = [(r, values[n]) for n, r in by_name.items()
             if n in values and r.option.given(values[n])]
    _check_where(found, where, [r for r, _ in given], flag)
    made = _source(found, where, given, flag)
    registration = next((v for r, v in given if r.part == _COMPONENT), "")
    return Component(found, made, Path(_path(registration)) if registration else None).validate()


def _check_where(kind: Kind, where: Where, given: Iterable[Row], flag: str) -> None:
    """Options of components that run elsewhere name what to add."""
    if not (elsewhere := [r for r in given if r.where not in (None, where)]):
        return
    other = elsewhere[0].where
    hints = "".join(f"; {h}" for h in dict.fromkeys(r.option.elsewhere for r in elsewhere
                                                     if r.option.elsewhere))
    raise errors.ConfigError(
        f"{', '.join(r.flags(flag)[0] for r in elsewhere)} name {_a(str(other))} {kind} "
        f"({flag}{COMPONENTS} is {where}{hints}): add {flag}{COMPONENTS} {other}, or drop them")


def _source(kind: Kind, where: Where, given: list[tuple[Row, str]], flag: str) -> Source:
    """The source the options choose, made from them."""
    selecting = [r for r, _ in given if r.option.selects]
    owners = list(dict.fromkeys(o for r in selecting for o in r.owners if o.where is where))
    if len(owners) > 1:
        first, second = (next(r for r in selecting if o in r.owners) for o in owners[:2])
        raise errors.ConfigError(f"{first.flags(flag)[0]} and {second.flags(flag)[0]} both name "
                                 f"the {kind} under test: give one")
    chosen_source = owners[0] if owners else source.default(where)
    chosen_by = next((r.flags(flag)[0] for r in selecting if chosen_source in r.owners), "")
    for row, _ in given:
        if row.owners and chosen_source not in row.owners:
            belongs = " or ".join(r.flags(flag)[0] for r in rows(kind)
                                  if r.option.selects and set(r.owners) & set(row.owners))
            text = row.option.conflict or "{option} belongs to {belongs}"
            raise errors.ConfigError(text.format(option=row.flags(flag)[0], chosen=chosen_by,
                                                 kind=kind, belongs=belongs))
    keyed = {r.option.key: _path(v) if r.option.path else v
             for r, v in given if r.part == _SOURCE}
    by_key = {r.option.key: r for r in rows(kind)}

    def named(key: str) -> str:
        return by_key[key].flags(flag)[0] if key in by_key else f"{flag}{kind}-{key}"

    return chosen_source.from_options(kind, keyed, named)


def _path(value: str) -> str:
    return str(Path(value).expanduser().resolve())
