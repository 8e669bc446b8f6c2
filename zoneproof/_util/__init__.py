"""Lowest layer: subprocess running, waiting/polling and ports. No Kubernetes, no cluster logic."""

__all__: list[str] = []
