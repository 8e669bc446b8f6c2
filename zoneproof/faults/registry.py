"""The one registry of fault kinds: a decorator registers each class, ``build`` makes values.

A kind is a frozen dataclass following ``base.Fault`` whose fields are its parameters.
``@registry.kind`` refuses a kind without a name, a taken name or no effects, so a kind
that figures and the effect check would not know cannot be registered. Chaos experiments
(``inject_fault``), the blast-radius control and the reports all go through ``build``.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from zoneproof import errors
from zoneproof.cluster.interface import Capability
from zoneproof.faults.base import Fault
from zoneproof.faults.effects import Effect

__all__ = ["build", "kind", "kinds", "parameters"]

F = TypeVar("F", bound=type[Fault])
_KINDS: dict[str, type[Fault]] = {}


def kind(cls: F) -> F:
    """Register the fault kind ``cls`` under its ``name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"fault kind {cls.__name__} needs a stable `name: ClassVar[str]`")
    if name in _KINDS and _KINDS[name] is not cls:
        raise TypeError(f"fault kind {name!r} is taken by {_KINDS[name].__name__}: "
                        f"{cls.__name__} needs another name")
    effects: frozenset[object] = getattr(cls, "effects", frozenset())
    if not effects or not all(isinstance(e, Effect) for e in effects):
        raise TypeError(f"fault kind {name!r} declares no effects: say what it must cause "
                        "(faults.effects.Effect), so the run can check it took effect")
    requires = getattr(cls, "requires", None)
    if not isinstance(requires, frozenset) or not all(isinstance(c, Capability) for c in requires):
        raise TypeError(f"fault kind {name!r} needs `requires: ClassVar[frozenset[Capability]]`")
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"fault kind {name!r} must be a (frozen) dataclass of its parameters")
    _KINDS[name] = cls
    return cls


def kinds() -> dict[str, type[Fault]]:
    """Every registered kind by name (sorted)."""
    return dict(sorted(_KINDS.items()))


def parameters(fault: type[Fault]) -> dict[str, Any]:
    """A kind's parameters and their defaults (``dataclasses.MISSING`` when required)."""
    return {f.name: f.default for f in dataclasses.fields(fault)  # type: ignore[arg-type]
            if f.init}


def _coerce(name: str, key: str, value: Any, hint: Any) -> Any:
    """``value`` as the field type ``hint`` (YAML lists → tuples, names → enum members)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and isinstance(value, list | tuple):
        return tuple(_coerce(name, key, v, args[0]) for v in value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise errors.ConfigError(f"fault {name}: {key} must be one of "
                                     f"{[m.value for m in hint]}, got {value!r}") from None
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    expected = origin or hint
    if isinstance(expected, type) and not isinstance(value, expected) or (
            expected is not bool and isinstance(value, bool)):
        raise errors.ConfigError(f"fault {name}: {key} must be {getattr(hint, '__name__', hint)}"
                                 f", got {value!r}")
    return value


def build(name: str, arguments: Mapping[str, Any] | None = None) -> Fault:
    """The fault of kind ``name`` with ``arguments``; ConfigError names the fix (the known
    kinds, the kind's parameters, the expected type)."""
    fault = _KINDS.get(name)
    if fault is None:
        raise errors.ConfigError(f"unknown fault {name!r}: choose one of {', '.join(kinds())}")
    accepted = parameters(fault)
    given = dict(arguments or {})
    unknown = sorted(set(given) - set(accepted))
    missing = sorted(k for k, v in accepted.items()
                     if v is dataclasses.MISSING and k not in given)
    if unknown or missing:
        raise errors.ConfigError(
            f"fault {name}: " + "; ".join(
                ([f"unknown parameters {unknown}"] if unknown else [])
                + ([f"missing parameters {missing}"] if missing else []))
            + f"; it takes {sorted(accepted) or 'no parameters'}")
    hints = typing.get_type_hints(fault)
    values = {k: _coerce(name, k, v, hints[k]) for k, v in given.items()}
    return fault(**values)
