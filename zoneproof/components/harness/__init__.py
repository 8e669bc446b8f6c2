"""The component under test: one concept for every kind (the webhook, the HA controller).

Belongs here: the registered kinds (``kinds``: what the suite knows of each, its settings
and conformance suite), where a component comes from (``source``: the ``Source`` contract
and its registry, entry-point group ``zoneproof.sources``; ``sources``: one module per
source zoneproof ships — a registered implementation and its variant, a vendor command, a
vendor URL, in-cluster manifests + image archive), the component value (``component``),
its options as one table the CLI, the pytest plugin and the certification profile are
made from (``option``, ``options``), the implementation registry (``registry``:
entry-point group ``zoneproof.components``), starting, registering and stopping
components — each kind's launcher (``webhook``, ``controller``, ``in_cluster_controller``)
and the deploying of workloads (``in_cluster``) — and the description of what actually ran
(``started``): used alike by conformance, chaos, qualification, mutants and reports. Not
here: any implementation of a component (``components.reference``, reached only through
the registry).
"""

__all__: list[str] = []
