"""What every component's variant registry shares: a named behaviour and the lookup by name.

Each component keeps its own ``Behaviour`` flags; this module knows neither component.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from zoneproof import errors

__all__ = ["Variant", "lookup"]

B = TypeVar("B")


@dataclass(frozen=True)  # not slots: with Generic, 3.11's typing cannot call a slotted alias
class Variant(Generic[B]):
    """A named behaviour; ``name`` is stable and appears in logs and reports."""

    name: str
    breaks: str
    behaviour: B


def lookup(variants: Mapping[str, Variant[B]], name: str, what: str) -> Variant[B]:
    """The variant called ``name``; ConfigError lists the valid names."""
    try:
        return variants[name]
    except KeyError:
        raise errors.ConfigError(
            f"unknown {what} {name!r}: choose one of {', '.join(variants)}") from None
