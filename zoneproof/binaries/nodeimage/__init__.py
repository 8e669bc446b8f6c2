"""The offline kind node image: ``zoneproof build --node-image`` (recipe and build pipeline).

Equivalent of ``kindest/node`` for the pinned Kubernetes, made with no registry from
Debian packages (debootstrap) and binaries built from their Go modules.
"""

from zoneproof.binaries.nodeimage.build import BuildResult, build_node_image
from zoneproof.binaries.nodeimage.recipe import Recipe

__all__ = ["BuildResult", "Recipe", "build_node_image"]
