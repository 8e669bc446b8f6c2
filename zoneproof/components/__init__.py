"""Components under test: the harness that runs them and the reference implementations.

Belongs here: ``harness`` (one component-under-test concept for the webhook and the HA
controller: reference, vendor command, vendor URL) and ``reference`` (the implementations
only). Not here: cluster backends, fault injection, measurement, SLO judgement,
conformance machinery.
"""

__all__: list[str] = []
