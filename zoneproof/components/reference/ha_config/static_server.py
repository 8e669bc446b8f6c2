"""The reference webhook on fixed cluster facts, for benchmarks: prints its port, serves until killed.

``python -m zoneproof.components.reference.ha_config.static_server CERT KEY NAMESPACE [WORKERS]``:
the namespace has the zones annotation ``zone-a,zone-b,zone-c``; the cluster has 6 Nodes.
With WORKERS > 1, that many processes serve the port (``workers``); the port is printed
once every one listens.
"""

from __future__ import annotations

import sys
from pathlib import Path

from zoneproof.components.reference.ha_config import server, workers
from zoneproof.specs.ha_config import facts, keys

__all__ = ["main"]

_LISTEN_TIMEOUT_S = 30.0


def main(argv: list[str]) -> None:
    """Serve with TLS ``CERT KEY`` and static facts for ``NAMESPACE`` in ``WORKERS`` processes."""
    cert_file, key_file, namespace, *rest = argv
    count = int(rest[0]) if rest else 1
    cluster = facts.StaticFacts(namespaces={namespace: facts.NamespaceInfo(
        namespace, annotations={keys.ANNOTATION_ZONES: "zone-a,zone-b,zone-c"})}, nodes=6)
    if count == 1:
        webhook = server.WebhookServer(cluster=cluster, cert_file=Path(cert_file), key_file=Path(key_file))
        print(webhook.port, flush=True)
        webhook.serve_forever()
        return
    me = workers.fork("127.0.0.1", 0, count)
    share = workers.per_worker(server.Limits().max_connections, count)
    limits = server.Limits(loops=1, max_connections=share)
    webhook = server.WebhookServer(cluster=cluster, cert_file=Path(cert_file), key_file=Path(key_file),
                                   port=me.port, limits=limits, reuse_port=True)
    if me.index == 0 and not me.wait_listening(_LISTEN_TIMEOUT_S):
        sys.exit(f"the other {count - 1} workers did not listen within {_LISTEN_TIMEOUT_S:.0f} s")
    me.listening()
    if me.index == 0:
        print(webhook.port, flush=True)
    webhook.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
