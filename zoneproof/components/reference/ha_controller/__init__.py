"""Reference HA controller: force-deletes matching pods when a node goes NotReady.

Belongs here: the controller process run by conformance and chaos suites (one module per
role: ``selectors`` and ``transitions`` are pure decisions, ``leader`` is Lease election,
``controller`` acts, ``watching`` feeds it, ``variants`` are the deliberately broken
builds, ``cli`` wires a process, ``component`` is its entry in the component registry).
Not here: fault injection, measurement, SLO judgement.
Run it with ``python -m zoneproof.components.reference.ha_controller --help``.
"""

__all__: list[str] = []
