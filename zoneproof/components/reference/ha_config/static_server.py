"""The reference webhook on fixed cluster facts, for benchmarks: prints its port, serves until killed.

``python -m zoneproof.components.reference.ha_config.static_server CERT KEY NAMESPACE``: the
namespace has the zones annotation ``zone-a,zone-b,zone-c``; the cluster has 6 Nodes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from zoneproof.components.reference.ha_config import server
from zoneproof.specs.ha_config import facts, keys

__all__ = ["main"]


def main(argv: list[str]) -> None:
    """Serve with TLS ``CERT KEY`` and static facts for ``NAMESPACE``."""
    cert_file, key_file, namespace = argv
    cluster = facts.StaticFacts(namespaces={namespace: facts.NamespaceInfo(
        namespace, annotations={keys.ANNOTATION_ZONES: "zone-a,zone-b,zone-c"})}, nodes=6)
    webhook = server.WebhookServer(cluster=cluster, cert_file=Path(cert_file), key_file=Path(key_file))
    print(webhook.port, flush=True)
    webhook.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
