"""Ownership on a real host (issue 14): ``down`` acts only on what a bed started, inside the
state root; partial beds are repaired, leaked ones listed and removed; etcd takes only
clients with its own certificates."""

from __future__ import annotations

import base64
import json
import os
import signal
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import urllib3

from zoneproof._util import daemons
from zoneproof.exit_codes import ExitCode
from zoneproof.runs import state

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("ownership")]
CLI = [sys.executable, "-m", "zoneproof.cli.main"]


def _up(host, *names: str) -> None:
    """Bring beds up at once (real ``zoneproof up`` processes) and note their ports."""
    procs = {n: host.start([*CLI, "up", "--cluster-name", n], f"up-{n}.log") for n in names}
    for name, proc in procs.items():
        assert proc.wait(timeout=900) == 0, host.log(f"up-{name}.log")
        host.remember_ports(name)


def _records(host, name: str) -> dict[str, daemons.DaemonRecord]:
    data = state.read_json(host.state / "local" / name / "state.json")
    return {n: daemons.DaemonRecord.from_dict(r) for n, r in data["processes"].items()}


def test_down_touches_only_what_the_named_bed_started(host, tmp_path: Path) -> None:
    _up(host, "pre", "pre2")
    bed_root = host.state / "local" / "pre"
    # a stranger whose command line holds the bed's path and name: not the bed's
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                                 str(bed_root), "pre", "pre2"])
    outside = host.state.parent / "dir2"  # what <state>/local/../../dir2 points at
    outside.mkdir()
    (outside / "keep").write_text("mine")
    userdir = host.state / "local" / "userdir"
    userdir.mkdir()
    (userdir / "keep").write_text("mine")
    try:
        for name, code in ((str(bed_root), ExitCode.USAGE), ("../../dir2", ExitCode.USAGE),
                           ("..", ExitCode.USAGE), ("", ExitCode.USAGE),
                           ("userdir", ExitCode.ERROR)):  # not a bed: refused, nothing removed
            result = host.cli("down", "--cluster-name", name)
            assert (result.returncode, "Traceback" in result.stderr) == (code, False), \
                f"down --cluster-name {name!r}: {result.stderr}"
        for name in ("pre", "pre2"):
            assert host.cli("status", "--cluster-name", name).returncode == 0, f"{name} was harmed"
        assert host.cli("down", "--cluster-name", "pre").returncode == 0
        assert host.beds() == ["pre2", "userdir"]
        status = host.cli("status", "--cluster-name", "pre2")
        assert status.returncode == 0 and status.stdout.count(": running") == 12, status.stdout
        assert all(daemons.alive(r) for r in _records(host, "pre2").values())
        assert stranger.poll() is None, "a process that merely names the bed was killed"
        assert (outside / "keep").read_text() == (userdir / "keep").read_text() == "mine"
        listing = host.cli("list").stdout
        assert "pre2" in listing and "healthy" in listing and "not zoneproof's" in listing
    finally:
        stranger.kill()
        stranger.wait()
    assert host.cli("down", "--cluster-name", "pre2").returncode == 0
    (userdir / "keep").unlink()
    userdir.rmdir()
    assert host.wait_clean() == {}


def _range(pool: urllib3.PoolManager, port: int) -> urllib3.BaseHTTPResponse:
    body = {"key": base64.b64encode(b"/registry").decode(),
            "range_end": base64.b64encode(b"/registrz").decode(), "count_only": True}
    return pool.request("POST", f"https://127.0.0.1:{port}/v3/kv/range",
                        body=json.dumps(body).encode(), retries=False, timeout=5.0)


def test_etcd_serves_only_clients_with_its_own_certificates(host) -> None:
    _up(host, "tls")
    pki = host.state / "local" / "tls" / "pki"
    port = state.read_json(host.state / "local" / "tls" / "state.json")["ports"]["etcd_client"][0]
    plain = urllib3.PoolManager()
    with pytest.raises(urllib3.exceptions.HTTPError):
        plain.request("POST", f"http://127.0.0.1:{port}/v3/kv/range", body=b"{}", retries=False,
                      timeout=5.0)
    anonymous = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=str(pki / "etcd-ca.crt"))
    cluster_ca_client = urllib3.PoolManager(  # system:masters, but of the cluster CA
        cert_reqs="CERT_REQUIRED", ca_certs=str(pki / "etcd-ca.crt"),
        cert_file=str(pki / "admin.crt"), key_file=str(pki / "admin.key"))
    for pool in (anonymous, cluster_ca_client):
        with pytest.raises((urllib3.exceptions.HTTPError, ssl.SSLError)):
            _range(pool, port)
    own = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=str(pki / "etcd-ca.crt"),
                              cert_file=str(pki / "etcd-health.crt"),
                              key_file=str(pki / "etcd-health.key"))
    answer = _range(own, port)
    assert answer.status == 200 and int(json.loads(answer.data)["count"]) > 0, answer.data
    modes = {p.name: p.stat().st_mode & 0o777 for p in (pki.parent, pki, pki.parent / "logs")}
    modes |= {p.name: p.stat().st_mode & 0o777 for p in pki.parent.glob("*kubeconfig")}
    modes |= {p.name: p.stat().st_mode & 0o777 for p in pki.glob("*.key")}
    modes["state.json"] = (pki.parent / "state.json").stat().st_mode & 0o777
    assert {n: m for n, m in modes.items() if m not in (0o700, 0o600)} == {}


def test_a_partial_bed_is_repaired_and_a_leaked_one_removed(host) -> None:
    _up(host, "bed")
    kcm = _records(host, "bed")["kube-controller-manager"]
    os.kill(kcm.pid, signal.SIGKILL)
    status = host.cli("status", "--cluster-name", "bed")
    assert status.returncode == 1
    assert "partial: not running: kube-controller-manager" in status.stdout, status.stdout
    assert "partial" in host.cli("list").stdout
    repaired = host.cli("up", "--cluster-name", "bed")
    assert repaired.returncode == 0 and "repaired" in repaired.stderr, repaired.stderr
    assert host.cli("status", "--cluster-name", "bed").returncode == 0
    for record in _records(host, "bed").values():
        daemons.send(record, signal.SIGKILL)  # the host rebooted, say
    listing = host.cli("list").stdout
    assert "leaked" in listing and "state without processes" in listing, listing
    cleaned = host.cli("down", "--all-leaked")
    assert cleaned.returncode == 0 and "removed 1 leaked bed" in cleaned.stderr, cleaned.stderr
    assert host.wait_clean() == {}
