"""up/down through the real CLI: idempotence, clean teardown after down, Ctrl-C, a killed run."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from zoneproof._util import waiting

pytestmark = pytest.mark.destructive
CLI = [sys.executable, "-m", "zoneproof.cli.main"]


def test_up_is_idempotent_and_down_leaves_nothing(host) -> None:
    first = host.cli("up", "--cluster-name", "life")
    assert first.returncode == 0, first.stderr
    host.remember_ports("life")
    again = host.cli("up", "--cluster-name", "life")
    assert again.returncode == 0 and "already up" in again.stderr
    other = host.cli("up", "--cluster-name", "life", "--nodes-per-zone", "1")
    assert other.returncode == 4 and "another spec" in other.stderr
    assert "zoneproof down" in other.stderr
    down = host.cli("down", "--cluster-name", "life")
    assert down.returncode == 0, down.stderr
    assert host.wait_clean() == {}
    assert "nothing to do" in host.cli("down", "--cluster-name", "life").stderr


def test_killed_pytest_run_is_cleaned_by_its_keeper(host, tmp_path: Path) -> None:
    """kill -9 of a pytest run: its keeper removes the bed the run made, at once."""
    flag = tmp_path / "acquired"
    (tmp_path / "test_hold.py").write_text(textwrap.dedent(f"""
        import time
        def test_hold(cluster_under_test):
            open({str(flag)!r}, "w").write(cluster_under_test.name)
            time.sleep(600)
    """))
    run = subprocess.Popen([sys.executable, "-m", "pytest", str(tmp_path / "test_hold.py"),
                            "-p", "no:cacheprovider", "--zp-cluster-name", "held"],
                           cwd=tmp_path, env=host.env(), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        waiting.wait_for(lambda: (flag.exists(), None), what="the pytest run's cluster",
                         timeout_s=600)
        host.remember_ports("held")
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    assert host.wait_clean() == {}


def test_busy_port_is_a_clear_error_and_starts_nothing(host) -> None:
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        result = host.cli("up", "--cluster-name", "busy", "--port-base", str(port))
    assert result.returncode == 4
    assert f"port {port}" in result.stderr and "--port-base" in result.stderr
    assert host.wait_clean() == {}


def test_unknown_backend_lists_the_valid_ones(host) -> None:
    result = host.cli("up", "--backend", "nope")
    assert result.returncode == 2
    assert "invalid choice: 'nope'" in result.stderr and "local" in result.stderr
