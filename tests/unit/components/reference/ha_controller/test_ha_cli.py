"""Command line: flags, validation, exit codes, and a whole process on fake APIs."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from kubernetes.client.exceptions import ApiException

from zoneproof import errors
from zoneproof._util import jsonlog, waiting
from zoneproof.components.reference.ha_controller import cli, variants
from zoneproof.components.reference.ha_controller.testing import (
    FakeCoreApi,
    FakeLeaseApi,
    WatchFactory,
    event,
    node,
)

BASE = ["--namespaces", "a,b", "--lease-name", "ha", "--lease-namespace", "zp"]


def options(*extra: str) -> cli.Options:
    return cli.parse_options(cli.build_parser().parse_args([*BASE, *extra]))


def test_defaults() -> None:
    opts = options()
    assert opts.settings.namespaces == frozenset({"a", "b"})
    assert opts.settings.selector.to_query() == "app=noobaa"
    assert opts.settings.variant is variants.REFERENCE
    e = opts.election
    assert (e.lease_duration_s, e.renew_deadline_s, e.retry_period_s) == (15, 10, 2)
    host, pid, rand = e.identity.rsplit("_", 2)
    assert host and pid.isdigit() and len(rand) == 6
    assert opts.settings.identity == e.identity
    assert options().election.identity != e.identity


def test_scale_defaults_and_pool_size() -> None:
    opts = options()
    assert (opts.workers, opts.qps, opts.burst) == (32, 200.0, 400)
    # 32 delete workers + the node watch + 2 pod watches (a, b) + elector + spare
    assert opts.connection_pool_size() == 32 + 1 + 2 + 2
    opts = options("--workers", "4", "--kube-api-qps", "5.5", "--kube-api-burst", "10")
    assert (opts.workers, opts.qps, opts.burst) == (4, 5.5, 10)


def test_all_namespaces_and_short_timings() -> None:
    opts = cli.parse_options(cli.build_parser().parse_args([
        "--all-namespaces", "--identity", "me", "--lease-duration", "3",
        "--renew-deadline", "2", "--retry-period", "0.5", "--selector", "tier in (db,core)",
        "--variant", "no-reconcile"]))
    assert opts.settings.namespaces is None and opts.election.identity == "me"
    assert opts.settings.variant.name == "no-reconcile"
    assert opts.settings.retry_delay_s == 0.5


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--renew-deadline", "15"], "--lease-duration \\(15s\\) must be greater"),
        (["--retry-period", "9"], "1.2 x --retry-period"),
        (["--selector", ""], "--selector is empty"),
        (["--selector", "app in ()"], "must not be empty"),
        (["--namespaces", "a,,b"], "has an empty name"),
        (["--watch-timeout", "0"], "--watch-timeout must be >= 1"),
        (["--workers", "0"], "--workers must be >= 1"),
        (["--kube-api-qps", "0"], "--kube-api-qps must be > 0"),
        (["--kube-api-burst", "0"], "--kube-api-burst must be >= 1"),
    ],
)
def test_invalid_options(extra: list[str], message: str) -> None:
    with pytest.raises(errors.ConfigError, match=message):
        options(*extra)


def test_all_problems_reported_at_once() -> None:
    with pytest.raises(errors.ConfigError) as info:
        options("--selector", "", "--renew-deadline", "20")
    assert "--selector" in str(info.value) and "--renew-deadline" in str(info.value)


@pytest.mark.parametrize(
    "argv",
    [["--namespaces", "a", "--all-namespaces"], [], ["--all-namespaces", "--variant", "nope"],
     ["--all-namespaces", "--lease-duration", "1.5"]],
    ids=["both-scopes", "no-scope", "unknown-variant", "fractional-duration"],
)
def test_argparse_errors_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == cli.EXIT_USAGE


def test_validation_errors_return_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*BASE, "--renew-deadline", "30"]) == cli.EXIT_USAGE
    assert "must be greater than --renew-deadline" in capsys.readouterr().err


def test_list_variants(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--list-variants"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert all(name in out for name in variants.VARIANTS)


def test_unreadable_kubeconfig_is_fatal(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("not: [valid")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        assert cli.main([*BASE, "--kubeconfig", str(bad)]) == cli.EXIT_FATAL
        assert cli.main([*BASE, "--kubeconfig", str(tmp_path / "missing")]) == cli.EXIT_FATAL
    finally:
        root.handlers[:], root.level = handlers, level
    assert "cannot build a Kubernetes client" in capsys.readouterr().err


def test_exit_codes_are_distinct() -> None:
    codes = [cli.EXIT_OK, cli.EXIT_FATAL, cli.EXIT_USAGE, cli.EXIT_LEASE_LOST]
    assert codes == [0, 1, 2, 3]


def test_json_log_line() -> None:
    logger = logging.getLogger("test.ha.json")
    captured: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = captured.append  # type: ignore[method-assign,assignment]
    logger.addHandler(handler)
    try:
        jsonlog.emit(logger, logging.WARNING, "pod-delete", node="n1", namespace="a",
                     pod="p", identity="me", lease_transitions=4)
    finally:
        logger.removeHandler(handler)
    line = json.loads(jsonlog.JsonFormatter().format(captured[0]))
    assert line["event"] == "pod-delete" and line["level"] == "WARNING"
    assert line["ts"].endswith("Z") and "T" in line["ts"]
    assert {k: line[k] for k in ("node", "namespace", "pod", "identity", "lease_transitions")} == {
        "node": "n1", "namespace": "a", "pod": "p", "identity": "me", "lease_transitions": 4}


# -- the whole process on fakes (real threads, short timings) -----------------------------

class Process:
    """``cli.run`` in a thread against fake APIs."""

    def __init__(self, variant: str = "reference") -> None:
        self.core = FakeCoreApi()
        self.core.add_node("n1")
        self.core.add_pod("a", "noobaa-0", "n1")
        self.leases = FakeLeaseApi()
        self.watch = WatchFactory([
            lambda: self.core.nodes.update(n1=node("n1", "False")),
            event("MODIFIED", node("n1", "False", rv="150"))])
        self.exits: list[int] = []
        self.stop = threading.Event()
        self.rc: list[int] = []
        self.options = options("--identity", "me", "--lease-duration", "2", "--renew-deadline",
                               "1", "--retry-period", "0.05", "--variant", variant)
        self.thread = threading.Thread(target=lambda: self.rc.append(cli.run(
            self.options, core=self.core, leases=self.leases, stop=self.stop,
            watch_factory=self.watch, pod_watch_factory=WatchFactory(),
            exit_now=self.exit_now)))

    def exit_now(self, code: int) -> NoReturn:
        self.exits.append(code)
        raise SystemExit(code)  # ends the elector thread quietly; os._exit in real life

    def holder(self) -> str | None:
        spec = self.leases.store.get(("zp", "ha"), {}).get("spec", {})
        return spec.get("holderIdentity") if spec else None

    def __enter__(self) -> Process:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.mark.parametrize(("variant", "holder_after"),
                         [("reference", ""), ("no-release-on-shutdown", "me")])
def test_run_acts_then_releases_on_stop(variant: str, holder_after: str) -> None:
    with Process(variant) as proc:
        waiting.wait_for(lambda: (len(proc.core.deletes) == 1, proc.core.deletes),
                         what="the pod deleted", timeout_s=10, interval_s=0.02)
        assert proc.holder() == "me"
    assert proc.rc == [cli.EXIT_OK] and proc.exits == []
    assert proc.holder() == holder_after


def test_run_exits_3_on_lease_loss() -> None:
    with Process() as proc:
        waiting.wait_for(lambda: (proc.holder() == "me", proc.holder()),
                         what="leadership", timeout_s=10, interval_s=0.02)
        proc.leases.fail = ApiException(status=500, reason="apiserver down")
        waiting.wait_for(lambda: (proc.stop.is_set(), proc.exits), what="exit",
                         timeout_s=10, interval_s=0.02)
    assert proc.exits == [cli.EXIT_LEASE_LOST]


class DeafWatch:
    """Like ``kubernetes.watch.Watch``: ``stop()`` is only noticed at the next event."""

    def __init__(self) -> None:
        self.next_event = threading.Event()

    def stream(self, func: object, *args: object, **kwargs: object) -> Iterator[object]:
        self.next_event.wait(10)
        yield from ()

    def stop(self) -> None:
        """Sets a flag the blocked stream does not see."""


def test_shutdown_releases_the_lease_without_waiting_for_a_blocked_watch() -> None:
    deaf, leases, stop = DeafWatch(), FakeLeaseApi(), threading.Event()
    opts = options("--identity", "me", "--lease-duration", "6", "--renew-deadline", "4",
                   "--retry-period", "0.05")
    thread = threading.Thread(target=lambda: cli.run(
        opts, core=FakeCoreApi(), leases=leases, stop=stop, watch_factory=lambda: deaf,
        pod_watch_factory=lambda: deaf))
    thread.start()

    def holder() -> tuple[bool, str | None]:
        spec = leases.store.get(("zp", "ha"), {}).get("spec") or {}
        return spec.get("holderIdentity") == wanted, spec.get("holderIdentity")

    try:
        wanted = "me"
        waiting.wait_for(holder, what="leadership", timeout_s=10, interval_s=0.02)
        stop.set()
        wanted = ""  # released well before the 4 s renew deadline a watcher join could take
        waiting.wait_for(holder, what="the release", timeout_s=2, interval_s=0.02)
    finally:
        stop.set()
        deaf.next_event.set()
        thread.join(10)
