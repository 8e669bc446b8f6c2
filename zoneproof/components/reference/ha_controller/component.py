"""The reference HA controller's entry in the component registry (``controller.reference``).

How the harness starts it (``python -m zoneproof.components.reference.ha_controller``)
and its variants.
"""

from __future__ import annotations

from zoneproof.components.harness import registry
from zoneproof.components.reference.ha_controller import variants

__all__ = ["IMPLEMENTATION"]

IMPLEMENTATION = registry.Implementation(
    kind=registry.Kind.CONTROLLER, name=registry.REFERENCE,
    command=("{python} -m zoneproof.components.reference.ha_controller --kubeconfig {kubeconfig} "
             "--identity {identity} --namespaces {namespaces} --selector {selector} "
             "--lease-name {lease_name} --lease-namespace {lease_namespace} "
             "--lease-duration {lease_duration} --renew-deadline {renew_deadline} "
             "--retry-period {retry_period} --variant {variant}"),
    variants=tuple(variants.VARIANTS))
