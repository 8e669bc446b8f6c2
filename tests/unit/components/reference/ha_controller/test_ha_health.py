"""The health endpoint the kubelet probes: 200 while every thread runs, 503 after, off by default."""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request

import pytest

from zoneproof._util import waiting
from zoneproof.components.reference.ha_controller import cli, health
from zoneproof.components.reference.ha_controller.testing import FakeCoreApi, FakeLeaseApi, WatchFactory

BASE = ["--namespaces", "a", "--lease-name", "ha", "--lease-namespace", "zp", "--identity", "me"]


def _get(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_probes_follow_the_threads() -> None:
    alive = [True]
    server = health.HealthServer(0, lambda: alive[0], bind="127.0.0.1")
    server.start()
    try:
        assert _get(server.port, "/healthz") == 200 and _get(server.port, "/readyz") == 200
        alive[0] = False
        assert _get(server.port, "/healthz") == 503 and _get(server.port, "/readyz") == 503
        assert _get(server.port, "/metrics") == 404
    finally:
        server.stop()


def test_health_port_is_off_by_default_and_validated() -> None:
    assert cli.parse_options(cli.build_parser().parse_args(BASE)).health_port is None
    parsed = cli.build_parser().parse_args([*BASE, "--health-port", "70000"])
    with pytest.raises(cli.errors.ConfigError, match="--health-port 70000 is outside 0-65535"):
        cli.parse_options(parsed)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_running_controller_answers_its_probes_until_it_stops() -> None:
    port = _free_port()
    options = cli.parse_options(cli.build_parser().parse_args([*BASE, "--health-port", str(port)]))
    stop = threading.Event()
    thread = threading.Thread(target=lambda: cli.run(options, core=FakeCoreApi(),
                                                     leases=FakeLeaseApi(), stop=stop,
                                                     watch_factory=WatchFactory(),
                                                     pod_watch_factory=WatchFactory()))
    thread.start()
    try:
        waiting.wait_for(lambda: (_get_or_none(port) == 200, _get_or_none(port)),
                         what="/healthz 200", timeout_s=10, interval_s=0.05)
    finally:
        stop.set()
        thread.join(10)
    assert _get_or_none(port) is None  # the server went with the process's run


def _get_or_none(port: int) -> int | None:
    try:
        return _get(port, "/healthz")
    except (urllib.error.URLError, ConnectionError):
        return None
