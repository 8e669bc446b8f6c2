"""The zoned local bed (``--layout zones``): one etcd member, API server, kcm and scheduler per
zone, links that really cut, and nothing left on the host after ``down`` or a SIGKILL of
``up`` (network namespaces, the host's veth, routes, processes).

Root only (network namespaces): elsewhere the local backend makes no zoned beds and these
tests skip, saying why. Two bed starts: 3 min 46 s for both tests under load (2026-11-27).
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from zoneproof._util import waiting
from zoneproof.cluster.interface import ControlPlaneProcess, ZoneCut
from zoneproof.cluster.local import netns
from zoneproof.cluster.local.backend import LocalBackend
from zoneproof.cluster.local.zoned import ZonedLocalCluster
from zoneproof.runs import state

from .conftest import CLI, STATE_ENV

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("zoned-bed")]
ZONES = ("zone-a", "zone-b", "zone-c")


@pytest.fixture(autouse=True)
def _needs_netns() -> None:
    if (why := netns.available()) is not None:
        pytest.skip(f"no zoned bed here: {why}")


def _index(host, name: str) -> int:
    return int(state.read_json(host.state / "local" / name / "state.json")["network"]["index"])


def _network_left(index: int) -> list[str]:
    """What a zoned bed of ``index`` left on the host: namespaces, links, routes."""
    network = netns.ZoneNetwork(index, ZONES)
    left = [n for n in network.namespaces() if (Path("/run/netns") / n).exists()]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           check=True).stdout
    left += [network.host_link] if f" {network.host_link}@" in links or \
        f" {network.host_link}:" in links else []
    routes = subprocess.run(["ip", "route", "show"], capture_output=True, text=True,
                            check=True).stdout
    left += [r for r in routes.splitlines() if r.startswith(f"10.213.{index}.")]
    return left


def _bed(host, name: str, monkeypatch: pytest.MonkeyPatch) -> ZonedLocalCluster:
    monkeypatch.setenv(STATE_ENV, str(host.state))
    bed = LocalBackend().get(name)
    assert isinstance(bed, ZonedLocalCluster), bed
    return bed


def test_zones_are_failure_domains_and_down_leaves_nothing(host, monkeypatch) -> None:
    up = host.cli("up", "--cluster-name", "zoned", "--layout", "zones", timeout_s=900)
    assert up.returncode == 0, up.stderr[-3000:]
    index = _index(host, "zoned")
    bed = _bed(host, "zoned", monkeypatch)

    # one of each per zone, each in its zone's namespace; every one runs
    assert bed.etcd_members() == [f"etcd-{z}" for z in ZONES]
    alive = bed.zone_processes_alive()
    for zone in ZONES:
        for role, process in bed.zone_control_plane(zone).items():
            assert process.endswith(zone), (role, process)
            assert role == "etcd" or alive[process], f"{process} is not running"
    assert bed.component_running(ControlPlaneProcess.APISERVER)

    # a partition drops zone-a's packets to the others (both sides keep running) ...
    assert all(ok for _, ok in bed.link_round_trips("zone-a").values())
    bed.cut_zone("zone-a", ZoneCut.PARTITION)
    try:
        assert bed.network.cuts() == {"zone-a": ["partition"]}
        assert not any(ok for _, ok in bed.link_round_trips("zone-a").values()), \
            "zone-a still reaches the other zones through a partition"
        from_b = bed.link_round_trips("zone-b")
        assert not from_b["zone-a"][1], "zone-b still reaches zone-a"
        assert from_b["zone-c"][1], "zone-b lost zone-c too"
    finally:
        bed.restore_zone("zone-a", ZoneCut.PARTITION)
    # ... and restoring it lets them through again (etcd keeps one leader for all three)
    assert bed.network.cuts() == {}
    waiting.wait_for(lambda: (all(ok for _, ok in bed.link_round_trips("zone-a").values()),
                              None), what="zone-a's links back", timeout_s=30)
    bed.wait_etcd_healthy(timeout_s=60)

    down = host.cli("down", "--cluster-name", "zoned")
    assert down.returncode == 0, down.stderr[-3000:]
    assert _network_left(index) == []
    assert host.wait_clean() == {}


def test_sigkill_of_up_leaves_no_network_behind(host) -> None:
    """``up --layout zones`` SIGKILLed with its zones' processes starting: its keeper
    removes the bed, its network namespaces and host link with it."""
    up = host.start([*CLI, "up", "--cluster-name", "killed", "--layout", "zones"], "up.log")

    def started() -> tuple[bool, None]:
        assert up.poll() is None, host.log("up.log")[-3000:]
        path = host.state / "local" / "killed" / "state.json"
        return path.is_file() and any(
            n.startswith("kube-apiserver") for n in state.read_json(path)["processes"]), None

    waiting.wait_for(started, what="up to start an API server", timeout_s=600, interval_s=0.2,
                     ignore=(ValueError, OSError, KeyError))
    index = _index(host, "killed")
    up.send_signal(signal.SIGKILL)
    assert up.wait(timeout=60) == -9
    assert host.wait_clean() == {}, host.log("up.log")[-3000:]
    waiting.wait_for(lambda: (not (left := _network_left(index)), left),
                     what="the killed bed's network removed", timeout_s=60)
