"""The controller process: parse options, wire elector + watcher + worker, handle signals.

Exit codes: 0 clean shutdown (SIGTERM/SIGINT; the Lease is released), 1 fatal error
(client cannot be built, a thread died), 2 bad arguments, 3 the Lease was lost (exits at
once, no lame-duck work). This is the only module that ends the process.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

from zoneproof import errors
from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_controller import (
    controller,
    deleting,
    health,
    leader,
    podcache,
    pool,
    ratelimit,
    selectors,
    variants,
    watching,
)

__all__ = [
    "DEFAULT_BURST",
    "DEFAULT_QPS",
    "DEFAULT_WORKERS",
    "EXIT_FATAL",
    "EXIT_LEASE_LOST",
    "EXIT_OK",
    "EXIT_USAGE",
    "CoreApi",
    "Options",
    "Wiring",
    "build_parser",
    "default_identity",
    "main",
    "parse_options",
    "run",
    "wire",
]

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FATAL = 1
EXIT_USAGE = 2
EXIT_LEASE_LOST = 3

#: Scale defaults: 32 deletes in flight (measured on a loaded bed: deletes took 0.7-2 s
#: each and 16 workers were all busy when a node went NotReady, delaying its first delete);
#: 400 requests at once, then 200/s (the budget this project's bed gives
#: kube-controller-manager). A zone of 100 nodes × 17 matching pods (1,700 deletes) then
#: takes >= 6.5 s on the client side alone: raise --kube-api-qps for bigger zones, lower
#: it to spare a shared API server.
DEFAULT_WORKERS = 32
DEFAULT_QPS = 200.0
DEFAULT_BURST = 400

WatchFactory = Callable[[], watching.WatchLike]


class CoreApi(Protocol):
    """The CoreV1Api calls the controller's watches and deletes use."""

    def list_node(self, **kwargs: Any) -> Any:
        """GET nodes (also the watch function)."""

    def list_namespaced_pod(self, namespace: str, **kwargs: Any) -> Any:
        """GET pods in one namespace (also the watch function)."""

    def list_pod_for_all_namespaces(self, **kwargs: Any) -> Any:
        """GET pods in every namespace (also the watch function)."""

    def delete_namespaced_pod(self, name: str, namespace: str, **kwargs: Any) -> Any:
        """DELETE one pod."""


@dataclass(frozen=True, slots=True)
class Options:
    """Validated command line."""

    kubeconfig: Path | None
    context: str | None
    settings: controller.ControllerOptions
    election: leader.ElectionConfig
    watch_timeout_s: int
    log_level: str
    workers: int = DEFAULT_WORKERS
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    #: serve /healthz and /readyz on this port (None: no health endpoint)
    health_port: int | None = None

    def connection_pool_size(self) -> int:
        """HTTP connections used at once: each delete worker, each watch, the elector, spare."""
        pod_watches = len(podcache.scopes(self.settings.namespaces))
        return self.workers + 1 + pod_watches + 2


def default_identity() -> str:
    """``hostname_pid_random``: unique per process, readable in the Lease."""
    return f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (one group per concern)."""
    parser = argparse.ArgumentParser(
        prog="python -m zoneproof.components.reference.ha_controller",
        description="Force-delete matching pods on nodes whose Ready condition goes "
                    "True -> False/Unknown; only the Lease holder acts.",
        epilog="exit codes: 0 clean shutdown, 1 fatal error, 2 bad arguments, 3 lease lost",
    )
    api = parser.add_argument_group("cluster")
    api.add_argument("--kubeconfig", type=Path, metavar="PATH",
                     help="kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
    api.add_argument("--context", metavar="NAME", help="kubeconfig context")
    scope = parser.add_argument_group("what to delete")
    where = scope.add_mutually_exclusive_group(required=True)
    where.add_argument("--namespaces", metavar="NS[,NS...]",
                       help="comma-separated namespaces to act in")
    where.add_argument("--all-namespaces", action="store_true", help="act in every namespace")
    scope.add_argument("--selector", default="app=noobaa", metavar="SELECTOR",
                       help="label selector of pods to force-delete (default: %(default)s)")
    election = parser.add_argument_group("leader election")
    election.add_argument("--lease-name", default="zoneproof-ha-controller", metavar="NAME",
                          help="Lease name (default: %(default)s)")
    election.add_argument("--lease-namespace", default="default", metavar="NS",
                          help="Lease namespace (default: %(default)s)")
    election.add_argument("--identity", metavar="ID",
                          help="holderIdentity (default: hostname_pid_random)")
    election.add_argument("--lease-duration", type=int, default=15, metavar="SECONDS",
                          help="leaseDurationSeconds (default: %(default)s)")
    election.add_argument("--renew-deadline", type=float, default=10.0, metavar="SECONDS",
                          help="give up leadership if not renewed within (default: %(default)s)")
    election.add_argument("--retry-period", type=float, default=2.0, metavar="SECONDS",
                          help="acquire/renew interval (default: %(default)s)")
    scale = parser.add_argument_group("scale")
    scale.add_argument("--workers", type=int, default=DEFAULT_WORKERS, metavar="N",
                       help="delete workers: deletes in flight at once (default: %(default)s)")
    scale.add_argument("--kube-api-qps", type=float, default=DEFAULT_QPS, metavar="QPS",
                       help="client-side limit of pod lists, watches and deletes per second, "
                            "not of Lease renewals (default: %(default)s)")
    scale.add_argument("--kube-api-burst", type=int, default=DEFAULT_BURST, metavar="N",
                       help="requests allowed at once before --kube-api-qps applies "
                            "(default: %(default)s)")
    misc = parser.add_argument_group("misc")
    misc.add_argument("--variant", default="reference", choices=list(variants.VARIANTS),
                      metavar="NAME", help="behaviour; anything but 'reference' is deliberately "
                      f"broken: {', '.join(variants.VARIANTS)}")
    misc.add_argument("--list-variants", action="store_true",
                      help="print the variants and what each breaks, then exit")
    misc.add_argument("--watch-timeout", type=int, default=300, metavar="SECONDS",
                      help="server-side timeout of one node watch (default: %(default)s)")
    misc.add_argument("--health-port", type=int, metavar="PORT",
                      help="serve GET /healthz and /readyz over HTTP on this port (default: off)")
    misc.add_argument("--log-level", default="INFO",
                      choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="(default: %(default)s)")
    return parser


def parse_options(args: argparse.Namespace) -> Options:
    """Validate parsed arguments; ConfigError lists every problem."""
    problems: list[str] = []
    namespaces: frozenset[str] | None = None
    if not args.all_namespaces:
        names = [n.strip() for n in str(args.namespaces).split(",")]
        if not all(names):
            problems.append(f"--namespaces {args.namespaces!r} has an empty name")
        namespaces = frozenset(n for n in names if n)
    selector = selectors.Selector(())
    try:
        selector = selectors.parse_selector(args.selector)
        if selector.is_empty:
            problems.append("--selector is empty: that would force-delete every pod on the "
                            "node; pass e.g. --selector app=noobaa")
    except errors.ConfigError as exc:
        problems.append(f"--selector: {exc}")
    if args.watch_timeout < 1:
        problems.append(f"--watch-timeout must be >= 1, got {args.watch_timeout}")
    if args.health_port is not None and not 0 <= args.health_port <= 65535:
        problems.append(f"--health-port {args.health_port} is outside 0-65535")
    for check in (lambda: pool.FairPool(args.workers),
                  lambda: ratelimit.TokenBucket(args.kube_api_qps, args.kube_api_burst)):
        try:
            check()
        except errors.ConfigError as exc:
            problems.append(str(exc))
    identity = args.identity if args.identity is not None else default_identity()
    try:
        election = leader.ElectionConfig(
            lease_name=args.lease_name, lease_namespace=args.lease_namespace, identity=identity,
            lease_duration_s=args.lease_duration, renew_deadline_s=args.renew_deadline,
            retry_period_s=args.retry_period)
    except errors.ConfigError as exc:
        problems.append(str(exc))
    if problems:
        raise errors.ConfigError("; ".join(problems))
    settings = controller.ControllerOptions(
        selector=selector, namespaces=namespaces, identity=identity,
        variant=variants.get_variant(args.variant), retry_delay_s=args.retry_period)
    return Options(kubeconfig=args.kubeconfig, context=args.context, settings=settings,
                   election=election, watch_timeout_s=args.watch_timeout,
                   log_level=args.log_level, health_port=args.health_port,
                   workers=args.workers, qps=args.kube_api_qps, burst=args.kube_api_burst)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    if argv is None:
        argv = sys.argv[1:]
    if "--list-variants" in argv:
        for v in variants.VARIANTS.values():
            print(f"{v.name:24} breaks: {v.breaks}")
        return EXIT_OK
    args = parser.parse_args(argv)
    try:
        options = parse_options(args)
    except errors.ConfigError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    _configure_logging(options.log_level)
    import yaml
    from kubernetes import client, config

    from zoneproof._util import kube

    # The client's certificate and key files (from a kubeconfig's *-data) go into a private
    # directory removed before any exit, os._exit on lease loss included.
    credentials = Path(tempfile.mkdtemp(prefix="zp-hac-credentials-"))

    def exit_now(code: int) -> NoReturn:
        shutil.rmtree(credentials, ignore_errors=True)
        os._exit(code)

    try:
        try:
            api = kube.api_client(options.kubeconfig, context=options.context,
                                  temp_dir=credentials, pool_maxsize=options.connection_pool_size())
        except (config.ConfigException, OSError, ValueError, yaml.YAMLError) as exc:
            error = errors.ConfigError(f"cannot build a Kubernetes client from "
                                       f"{options.kubeconfig or 'the default kubeconfig'}: {exc}")
            print(f"{parser.prog}: error: {error}", file=sys.stderr)
            return EXIT_FATAL
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        return run(options, core=client.CoreV1Api(api), leases=client.CoordinationV1Api(api),
                   stop=stop, exit_now=exit_now)
    finally:
        shutil.rmtree(credentials, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Wiring:
    """The parts of one controller process, connected (no threads started)."""

    elector: leader.LeaderElector | None
    gate: leader.Gate
    controller: controller.Controller
    pods: podcache.PodCache
    watches: tuple[watching.ListWatch, ...]
    """The node ListWatch first, then one per pod scope."""


def wire(
    options: Options,
    *,
    core: CoreApi,
    leases: leader.LeaseApi,
    exit_now: Callable[[int], NoReturn] = os._exit,
    clock: leader.Clock | None = None,
    watch_factory: WatchFactory | None = None,
    pod_watch_factory: WatchFactory | None = None,
) -> Wiring:
    """Connect elector, gate, caches, pool and controller as the variant says.

    Losing the Lease calls ``exit_now(EXIT_LEASE_LOST)`` from the elector thread at once
    (``os._exit``: no cleanup, no lame-duck work), unless the variant is
    ``survives-lease-loss``, which logs and keeps acting under the stale leadership.
    """
    settings, behaviour = options.settings, options.settings.behaviour
    sink: list[controller.Controller] = []

    def on_lost(reason: str) -> None:
        if behaviour.exit_on_lease_loss:
            for handler in logging.getLogger().handlers:
                handler.flush()
            exit_now(EXIT_LEASE_LOST)
        jsonlog.emit(log, logging.ERROR, "lease-lost-ignored", identity=settings.identity,
                     variant=settings.variant.name, reason=reason)

    def on_started(lead: leader.Leadership) -> None:
        for worker in sink:
            worker.on_started_leading(lead)

    def before_acquire() -> None:  # the acts-before-lease variant
        emit = deleting.Emitter(leader.Unelected(settings.identity), settings.identity,
                                settings.variant.name)
        deleter = deleting.Deleter(core, leader.Unelected(settings.identity), emit,
                                   grace_period_seconds=behaviour.grace_period_seconds,
                                   request_timeout_s=settings.request_timeout_s)
        for worker in sink:
            worker.catch_up_before_leading(deleter, options.election.renew_deadline_s)

    if not behaviour.leader_election:
        gate: leader.Gate = leader.Unelected(settings.identity)
        elector = None
    else:
        elector = leader.LeaderElector(
            leases, options.election, on_lost=on_lost, on_started=on_started, clock=clock,
            renew=behaviour.renew_lease,
            before_acquire=None if behaviour.lease_before_acting else before_acquire,
            keep_competing=behaviour.keep_competing,
            standby=leader.StandbyQuirks(behaviour.stay_standby, behaviour.take_expired,
                                         behaviour.expiry_fraction))
        gate = elector if behaviour.exit_on_lease_loss else leader.LameDuckGate(elector)
    limiter = ratelimit.TokenBucket(options.qps, options.burst)
    scopes = podcache.scopes(settings.namespaces if behaviour.only_watched_namespaces
                             else None)
    pods = podcache.PodCache(scopes)
    sink.append(controller.Controller(core, gate, settings, pods=pods,
                                      workers=pool.FairPool(options.workers), limiter=limiter))
    common: dict[str, Any] = {"limiter": limiter, "timeout_s": options.watch_timeout_s}
    nodes = watching.ListWatch("nodes", core.list_node, on_list=sink[0].observe_list,
                               on_event=sink[0].observe_event, watch_factory=watch_factory,
                               **common)
    query = ({"label_selector": settings.selector.to_query()}
             if behaviour.use_selector else {})
    pod_watches = [watching.ListWatch(
        f"pods/{scope or '*'}",
        core.list_pod_for_all_namespaces if scope is None
        else functools.partial(core.list_namespaced_pod, scope),
        on_list=_replacer(pods, scope),
        on_event=pods.apply, query=query, watch_factory=pod_watch_factory, **common)
        for scope in scopes]
    return Wiring(elector, gate, sink[0], pods, (nodes, *pod_watches))


def run(
    options: Options,
    *,
    core: CoreApi,
    leases: leader.LeaseApi,
    stop: threading.Event,
    watch_factory: WatchFactory | None = None,
    pod_watch_factory: WatchFactory | None = None,
    exit_now: Callable[[int], NoReturn] = os._exit,
) -> int:
    """Run until ``stop`` is set (→ release the Lease, EXIT_OK) or a thread dies (EXIT_FATAL)."""
    settings = options.settings
    parts = wire(options, core=core, leases=leases, exit_now=exit_now,
                 watch_factory=watch_factory, pod_watch_factory=pod_watch_factory)
    elector, worker = parts.elector, parts.controller
    fatal: list[BaseException] = []
    watch_threads = [_thread(w.what, w.run, stop, fatal) for w in parts.watches]
    threads = [_thread("dispatcher", worker.run_worker, stop, fatal),
               *(_thread(f"delete-{i}", worker.pool.work, stop, fatal)
                 for i in range(options.workers))]
    elector_stop = threading.Event()
    if elector is not None:
        threads.append(_thread("elector", lambda: elector.run(elector_stop), stop, fatal))
    jsonlog.emit(log, logging.INFO, "controller-started", identity=settings.identity,
                 variant=settings.variant.name, selector=settings.selector.to_query(),
                 namespaces=sorted(settings.namespaces) if settings.namespaces else "*",
                 lease=f"{options.election.lease_namespace}/{options.election.lease_name}",
                 workers=options.workers, kube_api_qps=options.qps,
                 kube_api_burst=options.burst)
    for t in (*threads, *watch_threads):
        t.start()
    probes = None
    if options.health_port is not None:
        probes = health.HealthServer(options.health_port, lambda: all(t.is_alive() for t in threads))
        probes.start()
    stop.wait()
    if probes is not None:
        probes.stop()
    deadline_s = options.election.renew_deadline_s
    worker.stop(timeout_s=deadline_s)
    for w in parts.watches:
        w.stop()
    elector_stop.set()
    # The watches make no writes and a blocked stream may only end with its next event
    # (Watch.stop() is checked between events): release without waiting for them.
    for t in threads:
        t.join(timeout=deadline_s)
    released = False
    if elector is not None and settings.behaviour.release_on_shutdown and not fatal:
        released = elector.release()
    for t in watch_threads:
        t.join(timeout=deadline_s)
    jsonlog.emit(log, logging.INFO, "controller-stopped", identity=settings.identity,
                 variant=settings.variant.name, lease_released=released,
                 fatal=[repr(e) for e in fatal], deleted=worker.counters.deleted)
    return EXIT_FATAL if fatal else EXIT_OK


def _replacer(pods: podcache.PodCache, scope: str | None) -> Callable[[list[Any], str], None]:
    """``on_list`` of the pod ListWatch of ``scope``."""

    def replace(items: list[Any], reason: str) -> None:
        pods.replace(scope, items)

    return replace


def _thread(name: str, target: Callable[[], Any], stop: threading.Event,
            fatal: list[BaseException]) -> threading.Thread:
    """A daemon thread whose death stops the process with EXIT_FATAL."""

    def guarded() -> None:
        try:
            target()
        except BaseException as exc:  # recorded and turned into EXIT_FATAL by run()
            fatal.append(exc)
            log.exception("thread %s died", name)
            stop.set()

    return threading.Thread(target=guarded, name=f"ha-{name}", daemon=True)


def _configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(jsonlog.JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("urllib3").setLevel(logging.WARNING)
    logging.getLogger("kubernetes").setLevel(logging.WARNING)
