"""The component under test: one concept for the webhook and the HA controller.

Belongs here: what a component under test is and where it comes from (``component``:
a registered implementation and its variant, a vendor command, a vendor URL), the
component registry (``registry``: entry-point group ``zoneproof.components``), starting,
registering and stopping it (``webhook``, ``controller``; as in-cluster workloads from
manifests + an image archive: ``in_cluster``, ``in_cluster_controller``) and the
description of what actually ran (``started``) — used alike by conformance, chaos, qualification, mutants and
reports. Not here: any implementation of a component (``components.reference``, reached
only through the registry).
"""

__all__: list[str] = []
