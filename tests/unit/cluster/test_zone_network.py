"""The zoned local bed's network, as pure data: addresses, namespaces, cut rules, argv; and
toxiproxy's proxies and toxics."""

from __future__ import annotations

import ipaddress

import pytest

from zoneproof import errors
from zoneproof.cluster.local import netns, toxiproxy
from zoneproof.cluster.local.netns import Cut, ZoneNetwork

ZONES = ("zone-a", "zone-b", "zone-c")


def test_every_address_is_distinct_and_in_the_beds_subnet() -> None:
    net = ZoneNetwork(7, ZONES)
    addresses = [net.lb, net.host, *(a for z in ZONES for a in (
        net.wire(z), net.name(z), net.kubelet_address(z)))]
    assert len(set(addresses)) == len(addresses)
    subnet = ipaddress.ip_network("10.213.7.0/24")
    assert all(ipaddress.ip_address(a) in subnet for a in addresses)
    # each link a /30: the wan's end and the namespace's end share it, no two links overlap
    links = {ipaddress.ip_network(f"{a}/30", strict=False)
             for a in (net.host, *(net.wire(z) for z in ZONES),
                       *(net.kubelet_address(z) for z in ZONES))}
    assert len(links) == 1 + 2 * len(ZONES)


def test_namespaces_are_named_by_index_and_zone_number_within_ifnamsiz() -> None:
    net = ZoneNetwork(255, ZONES)
    assert net.namespaces() == ["zp255-wan", "zp255-1", "zp255-1k", "zp255-2", "zp255-2k",
                                "zp255-3", "zp255-3k"]
    assert len(net.host_link) <= 15
    with pytest.raises(errors.FaultError, match="no zone 'zone-z'"):
        net.namespace("zone-z")


def test_a_partition_drops_both_ways_between_the_zone_and_each_other_one() -> None:
    net = ZoneNetwork(1, ZONES)
    rules = net._rules(Cut.PARTITION, "zone-b")
    assert all(r[:2] == ["priority", "1002"] and r[-1] == "blackhole" for r in rules)
    pairs = {(r[3], r[5]) for r in rules}
    assert pairs == {("z2", net.wire("zone-a")), ("z1", net.wire("zone-b")),
                     ("z2", net.wire("zone-c")), ("z3", net.wire("zone-b"))}


def test_a_kubelet_cut_drops_only_what_the_zones_kubelets_send() -> None:
    net = ZoneNetwork(1, ZONES)
    assert net._rules(Cut.KUBELETS, "zone-c") == [
        ["priority", "2003", "iif", "k3", "blackhole"]]


def test_processes_enter_the_namespace_and_optionally_a_host_name_of_their_own() -> None:
    assert netns.exec_argv("zp1-1", ["etcd"]) == ["nsenter", "--net=/run/netns/zp1-1", "--",
                                                  "etcd"]
    argv = netns.exec_argv("zp1-1", ["kcm", "--x"], hostname="zone-a")
    assert argv[:3] == ["unshare", "--uts", "--"] and argv[-2:] == ["kcm", "--x"]
    assert "zone-a" in argv and argv.index("zone-a") < argv.index("nsenter")


def test_each_zones_toxiproxy_forwards_the_other_zones_etcd_ports() -> None:
    net = ZoneNetwork(1, ZONES)
    proxies = toxiproxy.proxies("zone-a", {z: (net.name(z), net.wire(z)) for z in ZONES})
    assert {p.to_zone for p in proxies} == {"zone-b", "zone-c"}
    assert {(p.listen, p.upstream) for p in proxies} == {
        (f"{net.name(z)}:{port}", f"{net.wire(z)}:{port}")
        for z in ("zone-b", "zone-c") for port in (2379, 2380)}


def test_toxics_go_on_both_streams_and_need_something_to_add() -> None:
    toxics = toxiproxy.Toxics(latency_ms=100, jitter_ms=10, bandwidth_kbps=64)
    defined = toxics.definitions()
    assert {(d["type"], d["stream"]) for d in defined} == {
        (k, s) for k in ("latency", "bandwidth") for s in ("upstream", "downstream")}
    assert next(d for d in defined if d["type"] == "latency")["attributes"] == {
        "latency": 100, "jitter": 10}
    assert toxiproxy.Toxics().problems() == [
        "no toxic: give latency_ms, bandwidth_kbps or timeout_ms (> 0)"]
    assert "latency_ms must be >= 0" in toxiproxy.Toxics(latency_ms=-1).problems()[0]
