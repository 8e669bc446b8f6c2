# PYTHON_ARGCOMPLETE_OK
"""``zoneproof``: the command line (argument parsing and printing; the work is in the rooms below)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NoReturn

import argcomplete

from zoneproof import bench, binaries, cluster, errors, runs
from zoneproof._util import durations, kube, reaping, userfiles
from zoneproof._util import progress as progress_
from zoneproof.binaries import images, nodeimage
from zoneproof.cli import console, readback, spelling
from zoneproof.cluster import interface, registry
from zoneproof.cluster.kind import config as kind_config
from zoneproof.cluster.spec import ClusterSpec, Timings, parse_zones
from zoneproof.components import manifests
from zoneproof.components.harness import options as component_options
from zoneproof.components.harness.component import Components
from zoneproof.exit_codes import ExitCode
from zoneproof.report import attestation, versions
from zoneproof.runs import ownership
from zoneproof.slo import verdict
from zoneproof.slo.linearizability import CHECKER
from zoneproof.suites import certify, mutants, profile, qualify

__all__ = ["DESCRIPTION", "main"]

DESCRIPTION = ("Chaos testing and conformance for Kubernetes high-availability machinery: bring "
               "up a multi-zone test bed, qualify the components under test (conformance suites "
               "and chaos experiments judged by SLOs), certify them in a signed bundle, read and "
               "compare past runs.")
_progress = console.progress


def _zones(text: str) -> tuple[str, ...]:
    try:
        return parse_zones(text)
    except errors.ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _cluster_name(text: str) -> str:
    try:
        return ownership.check_name(text)
    except errors.ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _path(text: str) -> Path:
    """A path as given, resolved against the current directory now (the suite runs from the
    checkout: a relative path would otherwise mean another place)."""
    if not text or "\0" in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not a path")
    return Path(text).expanduser().resolve()


def _whole(minimum: int, maximum: int = 1_000_000) -> Callable[[str], int]:
    """A whole number in [minimum, maximum]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number: give one from "
                                             f"{minimum} to {maximum}") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a whole number "
                                             f"from {minimum} to {maximum}")
        return value

    return parse


def _to_seconds(text: str) -> float:
    """Seconds as a number (``30``, ``2.5``) or a duration (``30s``, ``5m``, ``1m30s``)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return durations.parse_seconds(text)
    except errors.ConfigError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds or a duration "
                                         "(30s, 5m, 1m30s)") from None


def _seconds(text: str) -> float:
    """A finite duration, > 0 and at most an hour."""
    value = _to_seconds(text)
    if not math.isfinite(value) or not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r} seconds: give a finite number > 0 and "
                                         "<= 3600 (or a duration: 30s, 5m)")
    return value


def _whole_seconds(maximum: int) -> Callable[[str], int]:
    """A duration of whole seconds in [0, maximum]."""

    def parse(text: str) -> int:
        value = _to_seconds(text)
        if not math.isfinite(value) or value != int(value) or not 0 <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of seconds from 0 "
                                             f"to {maximum} (or a duration: 30s, 5m)")
        return int(value)

    return parse


def _add_target(parser: argparse.ArgumentParser) -> None:
    described = "; ".join(f"{name}: {cluster.backend_type(name).traits.summary}"
                          for name in cluster.backend_names())
    parser.add_argument("--backend", default=cluster.DEFAULT_BACKEND,
                        choices=cluster.backend_names(),
                        help=f"cluster backend (default: {cluster.DEFAULT_BACKEND}). {described}")
    parser.add_argument("--cluster-name", dest="name", default="zoneproof", type=_cluster_name,
                        help="cluster name: 1-40 lowercase letters, digits or '-' (default: "
                             "zoneproof)")
    spelling.add_deprecated(parser, "--cluster-name", "--name")
    needing = [n for n in cluster.backend_names() if cluster.backend_type(n).traits.needs_kubeconfig]
    parser.add_argument("--kubeconfig", type=_path,
                        help=f"kubeconfig of the cluster ({', '.join(needing)} backend)")


def _add_backend_options(parser: argparse.ArgumentParser) -> None:
    """Every installed backend's own options (``--port-base`` ...); each backend checks them."""
    owners: dict[str, list[str]] = {}
    declared: dict[str, interface.BackendOption] = {}
    for name, options in registry.options().items():
        for flag, option in options.items():
            owners.setdefault(flag, []).append(name)
            declared.setdefault(flag, option)
    for flag, option in declared.items():
        parser.add_argument(f"--{flag}", dest=_option_dest(flag),
                            metavar=None if option.choices else option.metavar,
                            choices=option.choices or None,
                            help=f"{option.help} ({' or '.join(owners[flag])} backend)")


def _option_dest(flag: str) -> str:
    return "backend_option_" + flag.replace("-", "_")


def _backend_options(args: argparse.Namespace) -> dict[str, str]:
    """The backend options given on the command line, by flag."""
    return {flag: str(value) for options in registry.options().values()
            for flag in options if (value := getattr(args, _option_dest(flag), None)) is not None}


def _components(args: argparse.Namespace) -> Components:
    chosen_components = component_options.chosen(args)
    capabilities = cluster.backend_type(args.backend).traits.capabilities
    if (reason := chosen_components.refusal(args.backend, capabilities)) is not None:
        raise errors.ConfigError(reason)
    return chosen_components


def _add_qualify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    qual = sub.add_parser("qualify", help="the release gate: build, up, suite, reports, down")
    _add_target(qual)
    qual.add_argument("--keep-cluster", action="store_true", help="leave the cluster up")
    _add_workers(qual)
    qual.add_argument("--slo-file", type=_path, metavar="FILE",
                      help="SLO file whose entries replace or add to the defaults by name")
    spelling.add_deprecated(qual, "--slo-file", "--slo")
    qual.add_argument("--experiments", nargs="+", default=[], metavar="EXPERIMENT",
                      help="run only these chaos experiments (chaos/*.yaml stems, separated by "
                      "spaces or commas), on every backend; the conformance suites still run "
                      "in full")
    spelling.add_deprecated(qual, "--experiments", "--only")
    qual.add_argument("--skip-experiments", nargs="+", default=[], metavar="EXPERIMENT",
                      help="do not run these chaos experiments (separated by spaces or commas; "
                      "the rest of the qualification still runs)")
    spelling.add_deprecated(qual, "--skip-experiments", "--skip")
    qual.add_argument("--scale", type=_whole(1, 10_000), default=0, metavar="NODES_PER_ZONE",
                      help="run the scale profile alone instead: the HA controller under test "
                      "on a bed of its own with this many kwok nodes per zone, zone a down, "
                      "judged by the scale-* SLOs")
    qual.add_argument("--scale-pods", type=_whole(1, 10_000_000), default=0, metavar="PODS",
                      help="pods of the scale profile, dealt evenly over its nodes (default: "
                      "100 × --scale, e.g. 10,000 on 300 nodes; 1,000 nodes and 100,000 pods: "
                      "--scale 334 --scale-pods 100000)")
    _add_self_check(qual)
    qual.add_argument("--no-html", action="store_true", help="skip the HTML reports")
    qual.add_argument("--allure", action="store_true",
                      help="also render the Allure report (needs Node.js and npm: Allure 3 is "
                           "installed once into the cache; its history carries over between "
                           "runs in the same reports directory)")
    qual.add_argument("--reports", type=_path, help="parent of the run's report directory "
                      "(default: reports/ in the current directory)")
    qual.add_argument("--allow-destructive", action="store_true",
                      help="allow disruptive faults on a cluster zoneproof did not make")
    _add_generated(qual)
    component_options.add_arguments(qual)
    qual.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")


def _add_workers(parser: argparse.ArgumentParser) -> None:
    """``--workers`` (``-n`` is kubectl's namespace: a deprecated alias here)."""
    parser.add_argument("--workers", type=_whole(1, 64), default=qualify.default_workers(),
                        help="pytest-xdist workers (default: %(default)s: one per core, at most 8)")
    spelling.add_deprecated(parser, "--workers", "-n")


def _names(given: Sequence[str]) -> tuple[str, ...]:
    """Names given as separate words, separated by commas, or both (``a b``, ``a,b``)."""
    return tuple(n for word in given for n in word.split(",") if n)


def _add_generated(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--thorough", action="store_true", help="generated conformance suites draw "
                        "ten times more inputs (nightly runs)")
    parser.add_argument("--seed", type=_seed, metavar="N", help="seed of the generated inputs (a "
                        "report shows its run's; the same seed replays them)")


def _seed(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"takes a whole number >= 0 (the seed a report shows), got {text!r}")
    return int(text)


def _add_self_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--self-check", action="store_true",
                        help="also run the self-check: the broken twins that prove each "
                        "experiment catches a broken component (make test runs them; the "
                        "report says whether they ran)")


def _add_certify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cert = sub.add_parser("certify", help="qualify a vendor's components as a certification "
                          "profile says; write the signed bundle (exit 0 only on PASS)")
    cert.add_argument("profile", type=_path, help="certification profile (YAML, kind "
                      "CertificationProfile; see certification/profile.example.yaml)")
    cert.add_argument("--key", type=_path, required=True, metavar="PEM",
                      help="the vendor's private signing key (Ed25519 or ECDSA P-256/P-384, PEM; "
                           f"password in ${attestation.PASSWORD_ENV} if encrypted)")
    cert.add_argument("--bundle", type=_path, metavar="FILE",
                      help="where to write the signed bundle (default: <reports>/<product>-"
                           "<version>-<run>.certification.tar.gz)")
    spelling.add_deprecated(cert, "--bundle", "-o", "--output")
    _add_workers(cert)
    cert.add_argument("--reports", type=_path, help="parent of the run's report directory "
                      "(default: reports/ in the current directory)")
    cert.add_argument("--keep-cluster", action="store_true", help="leave the cluster up")
    _add_generated(cert)
    _add_self_check(cert)
    cert.set_defaults(handler=_certify)
    ver = sub.add_parser("verify", help="check a certification bundle's digests and signature; "
                         "print what it attests (exit 0 verified PASS; 1 not verified or "
                         "verified FAIL; 3 verified PARTIAL)")
    ver.add_argument("bundle", type=_path, help="the .certification.tar.gz")
    ver.add_argument("--key", type=_path, required=True, metavar="PEM",
                     help="the vendor's public key (PEM)")
    console.add_output(ver)
    ver.set_defaults(handler=_verify)


def _writable_output(path: Path, flag: str) -> None:
    """``path`` can be written when the run ends: its directory exists and is writable, and
    it is not a directory itself (checked before anything runs)."""
    if path.is_dir():
        raise errors.ConfigError(f"{flag} {path} is a directory: give the bundle's file path "
                                 "(e.g. .../acme.certification.tar.gz)")
    if not path.parent.is_dir():
        raise errors.ConfigError(f"{flag} {path}: directory {path.parent} does not exist: create "
                                 "it first, or write the bundle elsewhere")
    try:
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        raise errors.ConfigError(f"{flag} {path}: directory {path.parent} is not writable "
                                 f"({exc.strerror or exc}): give a directory you can write "
                                 "to") from None


def _certify(args: argparse.Namespace) -> int:
    if args.bundle is not None:
        _writable_output(args.bundle, "--bundle")
    chosen = profile.load(args.profile)
    attestation.load_signer(args.key)  # a bad key is refused before anything opens
    _reap(runs.reap_dead(_progress))
    with _opened("certify"):
        return certify.certify(chosen, args.key, output=args.bundle, workers=args.workers,
                               keep_cluster=args.keep_cluster, reports=args.reports,
                               thorough=args.thorough, seed=args.seed,
                               self_check=args.self_check, progress=_progress).code


def _verify(args: argparse.Namespace) -> int:
    try:
        verified = certify.verify(args.bundle, args.key)
    except errors.VerificationError as exc:
        problems = str(exc).splitlines()
        console.emit({"bundle": str(args.bundle), "verified": False, "problems": problems},
                     args.output,
                     lambda: [f"{args.bundle}: NOT VERIFIED", *(f"  - {p}" for p in problems)])
        return ExitCode.FAIL
    console.emit({"bundle": str(args.bundle), "verified": True, "verdict": verified.verdict,
                  "files": verified.files, "keyid": verified.keyid,
                  "attested": verified.predicate}, args.output,
                 lambda: certify.describe(args.bundle, verified))
    return verdict.exit_code(verified.verdict)


def _add_build(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    build = sub.add_parser("build", help="build/cache the pinned upstream binaries and the "
                                         "history checker (porcupine-check)")
    build.add_argument("--force", action="store_true", help="rebuild even if cached")
    build.add_argument("--node-image", action="store_true",
                       help="build the offline kind node image (and kind) instead; needs docker, "
                            "debootstrap and root")
    build.add_argument("--images", action="store_true",
                       help="build the reference components' images (one archive, no registry) "
                            "instead; needs docker, debootstrap and root")


def _add_webhook_cert(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cert = sub.add_parser("webhook-cert", help="write a CA and a serving certificate for the "
                          "in-cluster webhook Service (tls.crt, tls.key, ca.crt: what "
                          "deploy/ha-config-webhook/kustomization.yaml reads)")
    cert.add_argument("directory", type=Path, nargs="?",
                      default=manifests.DEPLOY_DIR / manifests.TLS_DIR,
                      help="where to write them (default: deploy/ha-config-webhook/tls)")
    cert.add_argument("--service", default=manifests.WEBHOOK_SERVICE.name,
                      help="the webhook's Service (default: %(default)s)")
    cert.add_argument("--namespace", default=manifests.WEBHOOK_SERVICE.namespace,
                      help="its namespace (default: %(default)s)")
    cert.set_defaults(handler=_webhook_cert)


class _Parser(argparse.ArgumentParser):
    """argparse, refusing a bad command line in one line that says where help is."""

    def error(self, message: str) -> NoReturn:
        """One line: what is wrong, and ``--help``."""
        self.exit(ExitCode.USAGE, f"{self.prog}: error: {userfiles.bounded(message, chars=1000)} (see "
                     f"`{self.prog} --help`)\n")


class _Version(argparse.Action):
    """``--version``: what ``zoneproof version`` prints, then exit 0."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print("\n".join(readback.version_text(versions.pinned())))
        parser.exit()


def _add_globals(parser: argparse.ArgumentParser, default: object) -> None:
    """-v/-q: on the root parser (with defaults) and on every command (taken anywhere)."""
    parser.add_argument("-v", "--verbose", action="store_true", default=default,
                        help="debug logging")
    parser.add_argument("-q", "--quiet", action="store_true", default=default,
                        help="no progress lines (results and errors still print)")


def _parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = _Parser(prog="zoneproof", description=DESCRIPTION)
    _add_globals(parser, False)
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the versions (as `zoneproof version`) and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_build(sub)
    _add_webhook_cert(sub)

    up = sub.add_parser("up", help="bring up a multi-zone cluster and wait until it is ready")
    _add_target(up)
    defaults = ClusterSpec()
    up.add_argument("--zones", type=_zones, default=defaults.zones,
                    help="comma-separated zone names (default: zone-a,zone-b,zone-c)")
    up.add_argument("--nodes-per-zone", type=_whole(1, 10_000), default=defaults.nodes_per_zone,
                    help="nodes in each zone (default: %(default)s)")
    makers = [n for n in cluster.backend_names() if cluster.backend_type(n).traits.makes_clusters]
    up.add_argument("--etcd-members", type=int, help="etcd members (default: " + "; ".join(
        f"{n} {cluster.backend_type(n).traits.default_etcd_members}" for n in makers) + ")")
    _add_backend_options(up)
    t = Timings()
    up.add_argument("--node-monitor-grace-period", type=_seconds,
                    default=t.node_monitor_grace_period_s, metavar="DURATION",
                    help="how long a node may miss its lease before it is NotReady: 8s, 1m, "
                         "or seconds (default: %(default)s)")
    up.add_argument("--toleration-seconds", type=_whole_seconds(86_400), default=t.toleration_s,
                    metavar="DURATION", help="default not-ready/unreachable toleration: 30s, "
                    "5m, or whole seconds (default: %(default)s)")
    up.add_argument("--keep-on-failure", action="store_true",
                    help="leave a half-started cluster for debugging")
    up.add_argument("--allow-destructive", action="store_true",
                    help="allow disruptive faults on a cluster zoneproof did not make")

    kind_p = sub.add_parser("kind-config", help="print the kind config of a spec (or write "
                            "the repository's kind-configs/)")
    kind_p.add_argument("--etcd-members", type=int, default=1, help="control-plane nodes")
    kind_p.add_argument("--zones", type=_zones, default=defaults.zones,
                        help="comma-separated zone names (default: zone-a,zone-b,zone-c)")
    kind_p.add_argument("--nodes-per-zone", type=int, default=defaults.nodes_per_zone,
                        help="worker nodes in each zone (default: %(default)s)")
    kind_p.add_argument("--cgroup-v1", action="store_true", help="add failCgroupV1: false")
    kind_p.add_argument("--write", type=Path, metavar="DIR",
                        help="write the committed configs into DIR instead")
    kind_p.set_defaults(handler=_kind_config)

    _add_qualify(sub)
    _add_certify(sub)

    bench_p = sub.add_parser("bench", help="measure figures (medians over --runs)")
    bench_p.add_argument("what", choices=sorted(bench.BENCHES), help="the benchmark")
    bench_p.add_argument("--runs", type=_whole(1, 1000), default=3,
                         help="runs whose median each figure is (default: %(default)s)")
    bench_p.add_argument("--json", type=_path, help="also write the figures and every sample "
                         "to this file")
    console.add_output(bench_p)

    mutants_p = sub.add_parser("mutants", help="run a conformance suite against each broken variant")
    mutants_p.add_argument("component", choices=sorted(mutants.SUITES),
                           help="whose conformance suite runs against the broken variants")
    mutants_p.add_argument("--variants", nargs="+", metavar="NAME",
                           help="only these broken variants (default: every one)")
    spelling.add_deprecated(mutants_p, "--variants", "--only")
    mutants_p.add_argument("--implementation", default=mutants.REFERENCE, metavar="NAME",
                           help="registered implementation whose variants to run (entry-point "
                                "group zoneproof.components; default: %(default)s)")
    mutants_p.set_defaults(handler=_mutants)

    _add_cluster_commands(sub)
    readback.add_commands(sub)
    for command in sub.choices.values():
        _add_globals(command, argparse.SUPPRESS)
    return parser


def _add_cluster_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """down, status, kubeconfig (of one cluster) and list (of all)."""
    for name, text in (("down", "stop and remove a cluster zoneproof made"),
                       ("status", "show a cluster"),
                       ("kubeconfig", "print a cluster's kubeconfig path")):
        p = sub.add_parser(name, help=text)
        _add_target(p)
        if name == "kubeconfig":
            p.add_argument("--export", action="store_true", help="print `export KUBECONFIG=…`")
        if name == "status":
            console.add_output(p)
        if name == "down":
            p.add_argument("--all-leaked", action="store_true",
                           help="remove every leaked bed and everything runs that died left "
                                "behind (nothing zoneproof did not make); ignores --cluster-name")
    listing = sub.add_parser("list", help="every bed zoneproof keeps state of (healthy, "
                             "starting, partial or leaked, and its owner) and every open run")
    console.add_output(listing)
    listing.set_defaults(handler=_list)


def _spec(args: argparse.Namespace, backend: cluster.Backend) -> ClusterSpec:
    members = backend.traits.default_etcd_members if args.etcd_members is None \
        else args.etcd_members
    return ClusterSpec(
        name=args.name, zones=args.zones, nodes_per_zone=args.nodes_per_zone,
        etcd_members=members,
        timings=Timings(node_monitor_grace_period_s=args.node_monitor_grace_period,
                        toleration_s=round(args.toleration_seconds)),
    )


def _kind_config(args: argparse.Namespace) -> int:
    if args.write is not None:
        for file, text in kind_config.committed_configs().items():
            (args.write / file).write_text(text)
            _progress(f"wrote {args.write / file}")
        return 0
    spec = ClusterSpec(zones=args.zones, nodes_per_zone=args.nodes_per_zone,
                       etcd_members=args.etcd_members).validate()
    print(kind_config.to_yaml(kind_config.render(spec, cgroup_v1=args.cgroup_v1)), end="")
    return 0


def _webhook_cert(args: argparse.Namespace) -> int:
    service = manifests.ServiceRef(args.service, args.namespace)
    manifests.WebhookTls.issue(service).write(args.directory)
    names = ", ".join(manifests.service_dns_names(service))
    print(f"wrote {args.directory}/{{tls.crt,tls.key,ca.crt}} (a new CA; serving certificate for "
          f"{names})")
    return 0


def _build(args: argparse.Namespace) -> int:
    if args.node_image and args.images:
        raise errors.ConfigError("build --node-image and --images are two builds: run one, then "
                                 "the other")
    if args.images:
        built = images.build_component_images(force=args.force, progress=_progress)
        print(f"archive: {built.archive} ({built.size_bytes / 2**20:.0f} MiB)")
        for component, ref in built.images:
            print(f"{component}: {ref}")
        print(f"load into kind: kind load image-archive {built.archive} --name CLUSTER")
        return 0
    if args.node_image:
        kind = binaries.resolve.resolve("kind", force=args.force, progress=_progress)
        result = nodeimage.build_node_image(force=args.force, progress=_progress)
        print(f"kind: {kind}\nnode image: {result.tag}")
        return 0
    found = binaries.resolve_all(force=args.force, progress=_progress)
    for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kwok"):
        print(f"{name}: {found.path(name)}")
    # the history checker every experiment with register traffic runs (slo.linearizability)
    checker = binaries.resolve.resolve(CHECKER, force=args.force, progress=_progress)
    print(f"{CHECKER}: {checker}")
    return 0


def _kubeconfig(args: argparse.Namespace) -> Path | None:
    """For a backend that adopts a cluster: --kubeconfig, else $KUBECONFIG, else
    ~/.kube/config (as kubectl); said on stderr when not given as the flag."""
    given: Path | None = args.kubeconfig
    if given is not None or not cluster.backend_type(args.backend).traits.needs_kubeconfig:
        return given
    found, source = kube.default_kubeconfig(os.environ, Path.home())
    if found is not None:
        _progress(f"kubeconfig: {found} (from {source}; --kubeconfig overrides it)")
    return found


def _run(args: argparse.Namespace) -> int:
    if args.command == "build":
        return _build(args)
    if args.command == "bench":
        _reap(runs.reap_dead(_progress))
        with _opened("bench"):
            figures = bench.BENCHES[args.what](args.runs, _progress, args.json)
        console.emit(figures, args.output, lambda: bench.lines(figures))
        return 0
    traits = cluster.backend_type(args.backend).traits
    if args.kubeconfig is not None and not traits.needs_kubeconfig:
        adopting = [n for n in cluster.backend_names()
                    if cluster.backend_type(n).traits.needs_kubeconfig]
        raise errors.ConfigError(f"--kubeconfig names a cluster to adopt, and the {args.backend} "
                                 f"backend makes its own: add --backend {' or '.join(adopting)} "
                                 "to test that cluster, or drop --kubeconfig")
    args.kubeconfig = _kubeconfig(args)
    backend = cluster.get_backend(args.backend, kubeconfig=args.kubeconfig,
                                  allow_destructive=getattr(args, "allow_destructive", False),
                                  options=_backend_options(args))
    if args.command in _STARTERS:
        _reap(runs.reap_dead(_progress))
    if args.command == "up":
        spec = _spec(args, backend).validate()
        with _opened("up"), ownership.keeping():
            up = backend.create(spec, progress=_progress, keep_on_failure=args.keep_on_failure)
        print(f"export KUBECONFIG={up.kubeconfig}")
        return 0
    if args.command == "qualify":
        options = qualify.Options(
            keep_cluster=args.keep_cluster, workers=args.workers, slo_file=args.slo_file,
            only=_names(args.experiments), skip=_names(args.skip_experiments), html=not args.no_html,
            allure=args.allure,
            reports=args.reports, allow_destructive=args.allow_destructive,
            components=_components(args),
            pytest_args=[*component_options.settings_given(args), *args.pytest_args],
            scale=args.scale, scale_pods=args.scale_pods, thorough=args.thorough, seed=args.seed,
            self_check=args.self_check)
        spec = ClusterSpec(name=args.name, etcd_members=backend.traits.default_etcd_members)
        qualify.check(options, backend)  # bad input refused before the run opens
        with _opened("qualify"):
            return qualify.qualify(backend, spec, options,
                                   kubeconfig=args.kubeconfig, progress=_progress)
    if args.command == "down":
        return _down(args, backend)
    found_cluster = backend.get(args.name)
    if found_cluster is None:
        raise errors.BackendError(f"no {args.backend} cluster named {args.name!r}: "
                                  f"run `zoneproof up --cluster-name {args.name}`")
    if args.command == "kubeconfig":
        path = found_cluster.kubeconfig
        print(f"export KUBECONFIG={path}" if args.export else path)
        return 0
    status = found_cluster.status()
    zones = found_cluster.nodes_by_zone() if status.nodes_ready else {}
    console.emit({**dataclasses.asdict(status), "healthy": status.healthy,
                  "zones": {zone: {n: status.nodes_ready.get(n, False) for n in nodes}
                            for zone, nodes in sorted(zones.items())}},
                 args.output, lambda: _status_text(status, zones))
    return ExitCode.PASS if status.healthy else ExitCode.FAIL


def _status_text(status: interface.ClusterStatus, zones: dict[str, list[str]]) -> list[str]:
    """``zoneproof status`` as text."""
    state_text = "healthy" if status.healthy else f"NOT HEALTHY ({status.detail or 'degraded'})"
    lines = [f"cluster {status.name} ({status.backend}): {state_text}",
             f"kubeconfig: {status.kubeconfig}"]
    lines += [f"  process {name}: {'running' if alive else 'STOPPED'}"
              for name, alive in sorted(status.processes.items())]
    for zone, nodes in sorted(zones.items()):
        marks = ", ".join(f"{n} {'Ready' if status.nodes_ready.get(n) else 'NotReady'}"
                          for n in nodes)
        lines.append(f"  {zone}: {marks}")
    return lines


#: Commands that start or remove things: they first reap what dead runs left.
_STARTERS = ("up", "qualify", "down")


@contextlib.contextmanager
def _opened(kind: str) -> Iterator[runs.Run]:
    """This command's run: what it makes is undone if it dies half-way (its keeper). Called
    inside another run (in-process, from a test), that run holds it instead."""
    outer = runs.current()
    if outer is not None:
        yield outer
        return
    run = runs.open_run(kind)
    try:
        yield run
    finally:
        _reap(runs.close(_progress))


def _reap(problems: list[str]) -> None:
    for problem in problems:
        _progress(f"warning: {problem}")


def _down(args: argparse.Namespace, backend: cluster.Backend) -> int:
    if args.all_leaked:
        removed = 0
        for bed in registry.survey():
            if bed.health is ownership.Health.LEAKED:
                _progress(f"{bed.backend} bed {bed.name!r} is leaked ({bed.reason}): removing it")
                cluster.get_backend(bed.backend).delete(bed.name, progress=_progress)
                removed += 1
        _progress(f"removed {removed} leaked bed(s); runs whose owner died were reaped above")
        return 0
    if not backend.delete(args.name, progress=_progress):
        _progress(f"no {args.backend} cluster named {args.name!r}: nothing to do")
    for run in runs.forget_cluster(args.name):
        _progress(f"forgot test run {run} that used {args.name!r}")
    return 0


def _mutants(args: argparse.Namespace) -> int:
    _reap(runs.reap_dead(_progress))
    with _opened("mutants"):
        return mutants.main(args.component, args.variants, _progress, args.implementation)


def _list(args: argparse.Namespace) -> int:
    beds = registry.survey()
    open_runs = [runs.describe(run) for run in runs.runs()]
    killed = runs.reaped()
    console.emit({"beds": [dataclasses.asdict(b) for b in beds],
                  "runs": [dataclasses.asdict(r) for r in open_runs],
                  "killed": [dataclasses.asdict(g) for g in killed]},
                 args.output, lambda: _list_text(beds, open_runs, killed))
    return ExitCode.PASS


def _list_text(beds: list[ownership.BedView], open_runs: list[runs.RunView],
               killed: list[runs.Reaped]) -> list[str]:
    """``zoneproof list`` as text: beds, open runs, killed runs, what to do about leftovers."""
    lines = [f"{'BACKEND':<9}{'NAME':<26}{'STATE':<17}{'OWNER':<44}WHY"]
    lines += [f"{bed.backend:<9}{bed.name:<26}{bed.health:<17}{bed.owner:<44}{bed.reason}"
              for bed in beds]
    if open_runs:
        lines.append(f"\n{'RUN':<14}{'KIND':<9}{'PID':<9}{'OWNER':<8}HOLDS")
    lines += [f"{run.id:<14}{run.kind:<9}{run.pid or '-'!s:<9}"
              f"{'alive' if run.alive else 'DEAD':<8}{', '.join(run.holdings) or '-'}"
              for run in open_runs]
    if killed:
        lines.append(f"\n{'KILLED RUN':<14}{'KIND':<9}{'PID':<9}{'REAPED':<21}WHAT WAS UNDONE")
    for gone in killed:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(gone.reaped))
        lines.append(f"{gone.id:<14}{gone.kind:<9}{gone.pid or '-'!s:<9}{when:<21}"
                     f"{', '.join(gone.undone) or 'nothing held'}")
        lines.append(f"{'':<14}{gone.why}" + "".join(f"\n{'':<14}problem: {p}"
                                                    for p in gone.problems))
    leaked = [b for b in beds if b.health is ownership.Health.LEAKED]
    dead = [r for r in open_runs if not r.alive]
    if leaked or dead:
        lines.append(f"\n{len(leaked)} leaked bed(s), {len(dead)} dead run(s): "
                     "`zoneproof down --all-leaked` removes what zoneproof made of them")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (``exit_codes.ExitCode``: 4 on a zoneproof error,
    130 on Ctrl-C, 143 on SIGTERM)."""
    try:
        parser = _parser()  # reads every installed backend's traits
    except errors.ZoneproofError as exc:
        print(f"zoneproof: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    argcomplete.autocomplete(parser)
    args = parser.parse_args(argv)
    console.set_quiet(args.quiet)
    progress_.started()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    reaping.interrupt_on_terminate()
    try:
        return args.handler(args) if hasattr(args, "handler") else _run(args)
    except errors.ZoneproofError as exc:
        print(f"zoneproof: error: {userfiles.bounded(str(exc))}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt:
        received = reaping.interrupted_by()
        print(f"zoneproof: interrupted{f' by {received.name}' if received else ''}",
              file=sys.stderr)
        return 128 + (int(received) if received else 2)
    except BrokenPipeError:  # output piped into `head` and the like
        return 0


if __name__ == "__main__":
    sys.exit(main())
