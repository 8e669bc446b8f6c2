"""Upstream binaries, the kind node image and the components' images: pinned, resolved, built offline.

Resolution order for each binary (``resolve.resolve(name)`` for one, ``resolve_all`` for the
local bed): ``ZONEPROOF_<NAME>`` (a file) → ``ZONEPROOF_BIN_DIR``
(a directory of prebuilt binaries, e.g. downloaded releases) → the cache
(``~/.cache/zoneproof/bin/<project>-<version>/``) → a build from the upstream Go modules.
Images (``nodeimage``, ``images``) are built from Debian root file systems (``rootfs``:
debootstrap, ``docker import``, ``docker build --network none``) with no registry.
"""

from zoneproof.binaries.pins import BINARIES, PINS, Pins, project_of
from zoneproof.binaries.resolve import Binaries, cache_root, resolve_all, sha256_of

__all__ = ["BINARIES", "PINS", "Binaries", "Pins", "cache_root", "project_of", "resolve_all",
           "sha256_of"]
