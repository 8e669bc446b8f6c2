"""The component sources zoneproof ships, one module each (reached through ``harness.source``).

``registered`` (an implementation of the component registry and its variant), ``command``
(a vendor's command template), ``url`` (a webhook already running) and ``in_cluster``
(workloads from kustomize manifests + an image archive). Each is registered as an entry
point of group ``zoneproof.sources`` in ``pyproject.toml``.
"""

__all__: list[str] = []
