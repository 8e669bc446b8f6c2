"""zoneproof: chaos testing and conformance for Kubernetes high-availability machinery.

Each subpackage is a room that imports only the rooms below it: the layers of the
import-linter contract in pyproject.toml (the README's Architecture section shows them).
"""

from typing import Any

__all__ = ["__version__", "discover"]

__version__ = "0.1.0"


def discover(discover_system: bool = True) -> dict[str, Any]:
    """chaostoolkit's discovery entry point (``chaos discover zoneproof --no-install``)."""
    from zoneproof.chaos import discovery

    return discovery.discover(discover_system=discover_system)
