"""The reference webhook's entry in the component registry (entry point ``webhook.reference``).

How the harness starts it (``python -m zoneproof.components.reference.ha_config``), its
variants and the registration each variant wants.
"""

from __future__ import annotations

from zoneproof.components.harness import registry
from zoneproof.components.reference.ha_config import variants
from zoneproof.specs.ha_config import registration

__all__ = ["IMPLEMENTATION"]


def _selection(name: str) -> registration.Selection:
    return variants.selection(variants.get_variant(name))


IMPLEMENTATION = registry.Implementation(
    kind=registry.Kind.WEBHOOK, name=registry.REFERENCE,
    command=("{python} -m zoneproof.components.reference.ha_config --kubeconfig {kubeconfig} "
             "--bind {host} --port {port} --cert-file {cert_file} --key-file {key_file} "
             "--variant {variant}"),
    variants=tuple(variants.VARIANTS), selection=_selection)
