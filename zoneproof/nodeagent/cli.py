"""The node agent process (the node-agent image runs ``python -m zoneproof.nodeagent``)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from zoneproof._util import kube
from zoneproof._util.jsonlog import JsonFormatter
from zoneproof.nodeagent.agent import Agent
from zoneproof.nodeagent.protocol import NAMESPACE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the agent of ``--node`` until SIGTERM/SIGINT; then revert what is active."""
    parser = argparse.ArgumentParser(
        prog="python -m zoneproof.nodeagent",
        description="zoneproof's node agent: stops and starts its node's kubelet on command "
                    "(a ConfigMap per node), reverts by itself when the suite's switch Lease "
                    "is not renewed or a fault outlives its max_duration_s.")
    parser.add_argument("--node", default=os.environ.get("NODE_NAME", ""),
                        help="this node's name (default: $NODE_NAME)")
    parser.add_argument("--namespace", default=os.environ.get("POD_NAMESPACE", NAMESPACE),
                        help=f"the ConfigMaps and switch namespace (default: $POD_NAMESPACE or {NAMESPACE})")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between ticks")
    parser.add_argument("--kubeconfig", default=None, help="kubeconfig (default: in-cluster)")
    args = parser.parse_args(argv)
    if not args.node:
        parser.error("--node (or $NODE_NAME) is required")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter())
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    from kubernetes import client

    api = kube.api_client(None if args.kubeconfig is None else Path(args.kubeconfig))
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    agent = Agent(args.node, client.CoreV1Api(api), client.CoordinationV1Api(api),
                  namespace=args.namespace)
    agent.run(stop, args.interval)
    return 0


