"""``chaos discover zoneproof --no-install``: the activities and the system they would hit."""

from __future__ import annotations

from typing import Any

from chaoslib.discovery.discover import (
    discover_actions,
    discover_probes,
    initialize_discovery_result,
)

import zoneproof

__all__ = ["discover"]


def discover(discover_system: bool = True) -> dict[str, Any]:
    """chaostoolkit's discovery of this extension (the system part: none, it needs a run)."""
    discovery: dict[str, Any] = initialize_discovery_result(
        "zoneproof", zoneproof.__version__, "zoneproof")
    discovery["activities"].extend(discover_actions("zoneproof.chaos.actions"))
    discovery["activities"].extend(discover_probes("zoneproof.chaos.probes"))
    return discovery
