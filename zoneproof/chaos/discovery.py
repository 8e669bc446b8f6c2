"""``chaos discover zoneproof --no-install``: the activities and the fault kinds they inject."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from chaoslib.discovery.discover import (
    discover_actions,
    discover_probes,
    initialize_discovery_result,
)

import zoneproof
from zoneproof.faults import registry

__all__ = ["discover", "fault_kinds"]


def fault_kinds() -> list[dict[str, Any]]:
    """Every registered fault kind ``inject_fault`` takes: name, doc, parameters (with
    defaults), what it requires of the backend and the effects it must cause."""
    return [{"name": name, "doc": inspect.getdoc(kind) or "",
             "parameters": [{"name": p, **({} if d is dataclasses.MISSING else {"default": d})}
                            for p, d in registry.parameters(kind).items()],
             "requires": sorted(c.value for c in kind.requires),
             "effects": sorted(str(e) for e in kind.effects)}
            for name, kind in registry.kinds().items()]


def discover(discover_system: bool = True) -> dict[str, Any]:
    """chaostoolkit's discovery of this extension, plus ``faults`` (the fault kinds); the
    system part is empty (it needs a run)."""
    discovery: dict[str, Any] = initialize_discovery_result(
        "zoneproof", zoneproof.__version__, "zoneproof")
    discovery["activities"].extend(discover_actions("zoneproof.chaos.actions"))
    discovery["activities"].extend(discover_probes("zoneproof.chaos.probes"))
    discovery["faults"] = fault_kinds()
    return discovery
