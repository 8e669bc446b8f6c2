"""The component registry: implementations found through the entry-point group ``zoneproof.components``.

An implementation is a component the suite knows how to start by name: its kind, its
command template (with a ``{variant}`` placeholder), the names of its variants (the
correct one first, the deliberately broken ones after) and, for a webhook, the
registration each variant wants. The reference webhook and controller are registered
like any other (``pyproject.toml``); a vendor adds one entry point to their own package::

    [project.entry-points."zoneproof.components"]
    "webhook.acme" = "acme_webhook.zoneproof:IMPLEMENTATION"

The entry point's name is ``<kind>.<name>``; its object an ``Implementation``. The
harness reaches the reference implementations only this way, never by import.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass

from zoneproof import errors
from zoneproof.components.harness.kinds import Kind
from zoneproof.specs.ha_config import registration

__all__ = ["GROUP", "REFERENCE", "Implementation", "Kind", "implementation", "implementations"]

GROUP = "zoneproof.components"
REFERENCE = "reference"
"""Name of the reference implementation of each kind, and of its correct variant."""


@dataclass(frozen=True, slots=True)
class Implementation:
    """A registered implementation of ``kind``: how to start it and which variants it has."""

    kind: Kind
    name: str
    command: str
    """Command template: the kind's placeholders plus ``{variant}``."""
    variants: tuple[str, ...]
    """Variant names; the first is the correct behaviour, the rest are deliberately broken."""
    selection: Callable[[str], registration.Selection] | None = None
    """Webhooks: the registration's selection a variant wants (None: the spec's §3)."""

    @property
    def correct(self) -> str:
        """The variant that must pass every check."""
        return self.variants[0]

    @property
    def broken(self) -> tuple[str, ...]:
        """The deliberately broken variants."""
        return self.variants[1:]

    def check_variant(self, variant: str) -> None:
        """ConfigError naming the valid variants unless ``variant`` is one of them."""
        if variant not in self.variants:
            raise errors.ConfigError(f"unknown {self.kind} variant {variant!r} of {self.name!r}: "
                                     f"choose one of {', '.join(self.variants)}")

    def selection_of(self, variant: str) -> registration.Selection:
        """The registration's selection of ``variant`` (the spec's when not a webhook knob)."""
        self.check_variant(variant)
        return self.selection(variant) if self.selection is not None else registration.SPEC


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}


def _registered() -> str:
    return ", ".join(sorted(_entry_points())) or "none"


@functools.cache
def implementation(kind: Kind, name: str = REFERENCE) -> Implementation:
    """The implementation registered as ``<kind>.<name>``; ConfigError lists the registered ones."""
    entry = _entry_points().get(f"{kind}.{name}")
    if entry is None:
        raise errors.ConfigError(
            f"no {kind} implementation {name!r} is registered (entry-point group {GROUP!r}); "
            f"registered: {_registered()}. Reinstall zoneproof (`pip install -e .`) or the "
            "package that provides it")
    found = entry.load()
    if not isinstance(found, Implementation) or (found.kind, found.name) != (kind, name):
        raise errors.ConfigError(
            f"entry point {entry.name} = {entry.value} (group {GROUP!r}) must be an "
            f"Implementation of kind {kind!r} named {name!r}, got {found!r}")
    if not found.variants:
        raise errors.ConfigError(f"entry point {entry.name} declares no variants: list at "
                                 "least the correct one")
    return found


def implementations(kind: Kind) -> list[Implementation]:
    """Every registered implementation of ``kind``, by name."""
    names = sorted(n.split(".", 1)[1] for n in _entry_points() if n.startswith(f"{kind}."))
    return [implementation(kind, name) for name in names]
