"""procstat: CPU and memory of processes from /proc, grouped by bed process name."""

from __future__ import annotations

import os

from zoneproof.bench import procstat
from zoneproof.bench.scale import _cost_figures


def test_own_process_has_cpu_and_memory() -> None:
    assert procstat.cpu_seconds(os.getpid()) > 0
    assert procstat.rss_mib(os.getpid()) > 1
    assert procstat.peak_rss_mib(os.getpid()) >= procstat.rss_mib(os.getpid())


def test_groups() -> None:
    assert [procstat.group_of(n) for n in ("etcd-2", "kwok-zone-a", "kube-apiserver")] == [
        "etcd", "kwok", "kube-apiserver"]


def test_cpu_by_name_skips_gone_processes() -> None:
    got = procstat.cpu_by_name({"etcd-0": os.getpid(), "kwok-gone": 2**22 + 7})
    assert set(got) == {"etcd-0"} and got["etcd-0"] > 0


def test_cpu_used_by_group_counts_gone_processes_with_nothing() -> None:
    before = {"etcd-0": 1.0, "etcd-1": 2.0, "kwok-zone-a": 5.0, "kwok-zone-b": 1.0}
    after = {"etcd-0": 1.5, "etcd-1": 3.0, "kwok-zone-b": 1.25}  # kwok-zone-a was stopped
    assert procstat.cpu_used_by_group(before, after) == {"etcd": 1.5, "kwok": 0.25}


def test_cost_figures_are_percent_of_one_core() -> None:
    got = _cost_figures({"kube-apiserver": 10.0, "controller": 1.0},
                        {"kube-apiserver": 15.0, "controller": 2.0}, 10.0)
    assert got["outage_cpu_kube-apiserver_percent"] == 50.0
    assert got["outage_cpu_controller_percent"] == 10.0
    assert got["outage_seconds"] == 10.0 and got["load_average_1m"] >= 0
