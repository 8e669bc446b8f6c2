"""The webhook process: arguments, JSON logging, caches, companion, HTTPS server, signals.

``python -m zoneproof.components.reference.ha_config --kubeconfig K --port P --cert-file C --key-file K``.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from zoneproof import errors
from zoneproof._util import jsonlog, kube
from zoneproof.components.reference.ha_config import (
    companion,
    informers,
    mutation,
    server,
    variants,
    workers,
)

__all__ = ["build_parser", "main"]

log = logging.getLogger(__name__)

_SYNC_POLL_S = 0.1


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 0-65535")
    return value


def _seconds(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"toleration seconds must be >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0 seconds, got {text}")
    return value


def _non_negative_seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 seconds, got {text}")
    return value


def _readable(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    return path


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (bad values exit 2 with a message naming the option)."""
    parser = argparse.ArgumentParser(
        prog="python -m zoneproof.components.reference.ha_config",
        description="Reference high-availability-config mutating webhook (Gardener GRM semantics).")
    parser.add_argument("--kubeconfig", type=_readable, metavar="FILE",
                        help="cluster to read Nodes/Namespaces/HPAs from (default: $KUBECONFIG, in-cluster)")
    parser.add_argument("--port", type=_port, required=True, metavar="PORT", help="HTTPS port (0: any free)")
    parser.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                        help="listen address (default %(default)s)")
    parser.add_argument("--cert-file", type=_readable, required=True, metavar="FILE",
                        help="serving certificate (PEM)")
    parser.add_argument("--key-file", type=_readable, required=True, metavar="FILE", help="serving key (PEM)")
    parser.add_argument("--variant", default=variants.REFERENCE.name, choices=list(variants.VARIANTS),
                        metavar="NAME", help=f"behaviour variant: {', '.join(variants.VARIANTS)}")
    parser.add_argument("--not-ready-toleration-seconds", type=_seconds, metavar="S",
                        help="defaultNotReadyTolerationSeconds (unset: no not-ready toleration)")
    parser.add_argument("--unreachable-toleration-seconds", type=_seconds, metavar="S",
                        help="defaultUnreachableTolerationSeconds (unset: no unreachable toleration)")
    limits = parser.add_argument_group("serving limits (see the server module)")
    default = server.Limits()
    limits.add_argument("--max-body-bytes", type=_positive, default=default.max_body_bytes,
                        metavar="N", help="largest accepted request body; larger: 413 (default %(default)s)")
    limits.add_argument("--backlog", type=_positive, default=default.backlog, metavar="N",
                        help="listen backlog (capped by net.core.somaxconn; default %(default)s)")
    limits.add_argument("--max-connections", type=_positive, default=default.max_connections, metavar="N",
                        help="open connections served; one more is answered 503 (default %(default)s)")
    limits.add_argument("--header-timeout", type=_positive_seconds, default=default.header_timeout_s,
                        metavar="S", help="request line and headers must arrive within (default %(default)s)")
    limits.add_argument("--request-timeout", type=_positive_seconds, default=default.request_timeout_s,
                        metavar="S", help="a whole request, from its first byte to the answer, within "
                        "(default %(default)s)")
    limits.add_argument("--idle-timeout", type=_positive_seconds, default=default.idle_timeout_s,
                        metavar="S", help="close keep-alive connections idle for (default %(default)s)")
    parser.add_argument("--workers", type=_positive, default=1, metavar="N",
                        help="processes serving the port (SO_REUSEPORT; e.g. one per core), each with "
                        "its own caches and a share of --max-connections; the node controller runs "
                        "in the first (default %(default)s)")
    parser.add_argument("--shutdown-delay", type=_non_negative_seconds, default=0.0, metavar="S",
                        help="on SIGTERM, serve S seconds more while draining (/readyz 503, every "
                        "answer closes its connection) before it stops: behind a Service, the "
                        "endpoint and kube-proxy lag behind a deleted pod (deploy/: 5; a second "
                        "signal stops at once; default %(default)s)")
    parser.add_argument("--no-companion", action="store_true",
                        help="do not run the node controller (spec section 11) in this process")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return parser


def _configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(jsonlog.JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def _fork_workers(args: argparse.Namespace) -> workers.Workers:
    try:
        return workers.fork(args.bind, args.port, args.workers)
    except OSError as exc:
        raise errors.ConfigError(f"cannot serve on {args.bind}:{args.port}: {exc}") from exc


def main(argv: Sequence[str] | None = None) -> int:
    """Run the webhook until SIGTERM/SIGINT; the process exit code."""
    args = build_parser().parse_args(argv)
    _configure_logging(args.log_level)
    variant = variants.get_variant(args.variant)
    me = _fork_workers(args) if args.workers > 1 else None
    first = me is None or me.index == 0
    try:
        api = kube.api_client(args.kubeconfig)
    except Exception as exc:  # the kubernetes loader raises several unrelated types
        raise errors.ConfigError(f"cannot load kubeconfig {args.kubeconfig or '(default)'}: {exc}") from exc
    node_controller = None
    if variant.behaviour.companion and not args.no_companion and first:
        node_controller = companion.Companion(api, at_start=variant.behaviour.companion_at_start)
    cache = informers.ClusterCache(
        api, on_node_count=node_controller.observe_node_count if node_controller else None,
        hpa_forget_deleted=variant.behaviour.hpa_cache_deletes)
    settings = mutation.TolerationDefaults(args.not_ready_toleration_seconds,
                                           args.unreachable_toleration_seconds)
    if not first:  # a further worker listens only once its caches answer: it never serves unsynced
        cache.start()
        while not cache.synced():
            time.sleep(_SYNC_POLL_S)  # waiting for our own informers' first list
    limits = server.Limits(backlog=args.backlog, header_timeout_s=args.header_timeout,
                           request_timeout_s=args.request_timeout, idle_timeout_s=args.idle_timeout,
                           max_body_bytes=args.max_body_bytes, max_connections=args.max_connections)
    if me is not None:
        limits = dataclasses.replace(limits, loops=1, max_connections=workers.per_worker(
            args.max_connections, args.workers))
    try:
        webhook = server.WebhookServer(cluster=cache, cert_file=args.cert_file, key_file=args.key_file,
                                       bind=args.bind, port=args.port if me is None else me.port,
                                       settings=settings, variant=variant, limits=limits,
                                       reuse_port=me is not None)
    except (OSError, ValueError) as exc:
        raise errors.ConfigError(f"cannot serve on {args.bind}:{args.port} with {args.cert_file}: {exc}") \
            from exc
    if me is not None:
        me.listening()
    if first:
        cache.start()
    if node_controller is not None:
        threading.Thread(target=node_controller.run, name="companion", daemon=True).start()

    def stop(signum: int, _frame: FrameType | None) -> None:
        jsonlog.emit(log, logging.INFO, "webhook-stopping", signal=signal.Signals(signum).name)
        if me is not None:
            me.signal_workers(signum)
        again = webhook.draining  # a second signal cuts the drain short
        threading.Thread(target=webhook.shutdown if again else lambda: webhook.drain(args.shutdown_delay),
                         daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    webhook.serve_forever()
    cache.stop()
    if node_controller is not None:
        node_controller.stop()
    if me is not None:
        me.reap()
    return 0
