"""zoneproof: chaos testing and conformance for Kubernetes high-availability machinery.

Layers, lowest first (imports only go downward; checked by import-linter):
``_util`` < ``binaries`` < ``cluster`` < ``components`` < ``measure`` < ``faults``
< ``slo`` < ``report`` < ``chaos`` < ``cli``. The two components under test never import each other.
"""

from typing import Any

__all__ = ["__version__", "discover"]

__version__ = "0.1.0"


def discover(discover_system: bool = True) -> dict[str, Any]:
    """chaostoolkit's discovery entry point (``chaos discover zoneproof --no-install``)."""
    from zoneproof.chaos import discovery

    return discovery.discover(discover_system=discover_system)
