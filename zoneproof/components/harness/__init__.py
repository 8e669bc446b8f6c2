"""The component under test: one concept for the webhook and the HA controller.

Belongs here: starting, registering, stopping and describing a component under test —
the reference, a vendor command, a vendor URL — used alike by conformance, chaos,
qualification, mutants and reports. Not here: any implementation of a component.
"""

__all__: list[str] = []
