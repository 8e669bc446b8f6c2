"""zoneproof: chaos testing and conformance for Kubernetes high-availability machinery.

Layers, lowest first (imports only go downward; checked by import-linter):
``_util`` < ``binaries`` < ``cluster`` < ``components`` < ``measure`` < ``faults``
< ``slo`` < ``cli``. The two components under test never import each other.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
