"""Components under test: the harness that runs them and the reference implementations.

Belongs here: ``harness`` (one component-under-test concept for every registered kind —
the webhook and the HA controller — from any registered source: reference, vendor
command, vendor URL, in-cluster manifests), ``reference`` (the implementations
only) and ``manifests`` (rendering a kustomize manifests directory such as deploy/ for a
cluster: images, the webhook's serving certificate and caBundle). Not here: cluster
backends, fault injection, measurement, SLO judgement, conformance machinery.
"""

__all__: list[str] = []
