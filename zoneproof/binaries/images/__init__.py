"""The components' offline images: ``zoneproof build --images`` (recipe and build pipeline).

The reference webhook and HA controller as container images, made with no registry from
Debian's python3 (debootstrap), the Python distributions installed in this environment and
zoneproof's own sources, saved as one docker archive that kind loads into its nodes. Not
here: the manifests that run them (``deploy/``, rendered by ``zoneproof.components.manifests``)
or loading into a cluster (the cluster backends).
"""

from zoneproof.binaries.images.build import ImagesResult, build_component_images
from zoneproof.binaries.images.recipe import Recipe

__all__ = ["ImagesResult", "Recipe", "build_component_images"]
