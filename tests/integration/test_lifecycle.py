"""up/down through the real CLI: idempotence, clean teardown after down, Ctrl-C and kill -9."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from zoneproof._util import daemons, waiting
from zoneproof._util.ports import is_free
from zoneproof.cluster import state
from zoneproof.cluster.local import LocalBackend

pytestmark = pytest.mark.destructive
CLI = [sys.executable, "-m", "zoneproof.cli.main"]


def _name() -> str:
    return f"zp-life-{uuid.uuid4().hex[:6]}"


def _cli(*args: str, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout_s,
                          check=False)


def _root(name: str) -> Path:
    return state.state_root() / "local" / name


def _assert_gone(name: str, used_ports: list[int]) -> None:
    root = _root(name)
    assert not root.exists(), f"{root} left behind"
    assert daemons.find_by_marker(str(root)) == [], "processes left behind"
    assert [p for p in used_ports if not is_free(p)] == [], "ports still listening"


def _wait_recorded(name: str, process: str, timeout_s: float = 120) -> None:
    state_file = _root(name) / "state.json"
    waiting.wait_for(
        lambda: (state_file.is_file() and process in state.read_json(state_file)["processes"],
                 None), what=f"{process} of {name} to start", timeout_s=timeout_s,
        ignore=(ValueError, KeyError))


def test_up_is_idempotent_and_down_leaves_nothing() -> None:
    name = _name()
    first = _cli("up", "--name", name)
    assert first.returncode == 0, first.stderr
    cluster = LocalBackend().get(name)
    assert cluster is not None
    used = cluster.ports.all()
    try:
        again = _cli("up", "--name", name)
        assert again.returncode == 0 and "already up" in again.stderr
        other = _cli("up", "--name", name, "--nodes-per-zone", "1")
        assert other.returncode == 1 and "another spec" in other.stderr
        assert "zoneproof down" in other.stderr
    finally:
        down = _cli("down", "--name", name)
    assert down.returncode == 0, down.stderr
    _assert_gone(name, used)
    assert "nothing to do" in _cli("down", "--name", name).stderr


def test_ctrl_c_during_up_tears_down_what_started() -> None:
    name = _name()
    proc = subprocess.Popen([*CLI, "up", "--name", name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_recorded(name, "kube-apiserver")
    used = LocalBackend().get(name).ports.all()  # type: ignore[union-attr]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    _assert_gone(name, used)


def test_killed_pytest_run_is_cleaned_by_down(tmp_path: Path) -> None:
    name = _name()
    flag = tmp_path / "acquired"
    (tmp_path / "test_hold.py").write_text(textwrap.dedent(f"""
        import time
        def test_hold(cluster_under_test):
            open({str(flag)!r}, "w").write(cluster_under_test.name)
            time.sleep(600)
    """))
    run = subprocess.Popen([sys.executable, "-m", "pytest", str(tmp_path / "test_hold.py"),
                            "-p", "no:cacheprovider", "--zp-cluster-name", name],
                           cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        waiting.wait_for(lambda: (flag.exists(), None), what="the pytest run's cluster",
                         timeout_s=180)
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    cluster = LocalBackend().get(name)
    assert cluster is not None and cluster.status().healthy
    used = cluster.ports.all()
    down = _cli("down", "--name", name)
    assert down.returncode == 0, down.stderr
    _assert_gone(name, used)
    assert "forgot test run" in down.stderr  # the killed run's marker is gone too


def test_busy_port_is_a_clear_error_and_starts_nothing() -> None:
    name = _name()
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        result = _cli("up", "--name", name, "--port-base", str(port))
    assert result.returncode == 1
    assert f"port {port}" in result.stderr and "--port-base" in result.stderr
    assert not _root(name).exists()
    assert daemons.find_by_marker(str(_root(name))) == []


def test_unknown_backend_lists_the_valid_ones() -> None:
    result = _cli("up", "--backend", "nope")
    assert result.returncode == 2
    assert "invalid choice: 'nope'" in result.stderr and "local" in result.stderr
