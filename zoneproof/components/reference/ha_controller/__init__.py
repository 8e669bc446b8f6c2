"""Reference HA controller: force-deletes matching pods when a node goes NotReady.

Belongs here: the controller process run by conformance and chaos suites (one module per
role: ``selectors`` and ``transitions`` are pure decisions, ``leader`` is Lease election,
``watching`` lists and watches (nodes, pods), ``podcache`` keeps pods by node,
``controller`` decides, ``pool`` runs the deletes in parallel, fair across nodes,
``ratelimit`` bounds the request rate, ``deleting`` is the fenced delete itself,
``variants`` are the deliberately broken builds, ``health`` serves the probes, ``cli`` wires
a process, ``component`` is its entry in the component registry). Not here: fault injection,
measurement, SLO judgement.
Run it with ``python -m zoneproof.components.reference.ha_controller --help``.
"""

__all__: list[str] = []
