"""3 control-plane nodes (stacked etcd, 3 members): quorum experiments on real static pods.

kill one member → writes go on; kill a second → quorum lost (the survivor reports no health,
writes fail); give both back → every member healthy, writes go on. A control-plane node
container stopped and started again comes back at its address, its etcd member healthy.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Callable, Iterator

import pytest
import urllib3
from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.cluster.kind import KindCluster, docker, tools

WRITE_TIMEOUT_S = 5


@pytest.fixture(scope="module")
def ha(make_kind_cluster: Callable[..., KindCluster]) -> Iterator[KindCluster]:
    if not docker.image_exists(tools.LOAD_BALANCER_IMAGE):
        pytest.skip(f"kind's load balancer image {tools.LOAD_BALANCER_IMAGE} is not here "
                    "(nothing is pulled offline): no HA control plane")
    made = make_kind_cluster(etcd_members=3, zones=("zone-a",), nodes_per_zone=1)
    made.wait_etcd_healthy(timeout_s=60)
    yield made


def _write(ha: KindCluster) -> None:
    api = kube.api_client(ha.kubeconfig, retries=0)
    try:
        client.CoreV1Api(api).create_namespaced_config_map(
            "default", {"metadata": {"name": f"w-{uuid.uuid4().hex[:8]}"}},
            _request_timeout=WRITE_TIMEOUT_S)
    finally:
        api.close()


def _write_error(ha: KindCluster) -> str | None:
    """Why a write fails (None: it went through)."""
    try:
        _write(ha)
    except (client.ApiException, urllib3.exceptions.HTTPError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return None


def _write_fails(ha: KindCluster) -> bool:
    return _write_error(ha) is not None


def _writes_go_on(ha: KindCluster) -> tuple[bool, dict[str, object]]:
    error = _write_error(ha)
    if error is None:
        return True, {}
    return False, {"write": error, "apiservers": _apiservers_ready(ha)[1],
                   "etcd": {m: ha.etcd_member_healthy(m) for m in ha.etcd_members()
                            if docker.addresses(m)[0]}}


def _apiservers_ready(ha: KindCluster) -> tuple[bool, dict[str, int | str]]:
    """Each control-plane node's own kube-apiserver (its address, not the load balancer)
    answers /readyz: (all 200, status or error per node)."""
    seen: dict[str, int | str] = {}
    for node in ha.control_planes():
        if not docker.addresses(node)[0]:
            seen[node] = "stopped"
            continue
        api = kube.api_client(ha.kubeconfig, retries=0)
        api.configuration.host = f"https://{docker.ipv4(node)}:6443"
        try:
            seen[node] = int(kube.get_path(api, "/readyz", timeout_s=3).status)
        except (client.ApiException, urllib3.exceptions.HTTPError) as exc:
            seen[node] = type(exc).__name__
        finally:
            api.close()
    return all(v == 200 for v in seen.values()), seen


def _wait_apiservers_ready(ha: KindCluster) -> None:
    # after quorum loss an API server's liveness probe may have restarted it (kubelet back-off):
    # until every one is ready, the node a test stops may hold the only ready one
    waiting.wait_for(lambda: _apiservers_ready(ha), what="every kube-apiserver ready",
                     timeout_s=240, interval_s=2)


def test_three_members_one_leader(ha: KindCluster) -> None:
    members = ha.etcd_members()
    assert len(members) == 3
    assert ha.etcd_leader() in members
    assert all(ha.etcd_member_healthy(m) for m in members)


def test_quorum_survives_one_member_and_is_lost_with_two(ha: KindCluster) -> None:
    leader = ha.etcd_leader()
    first, second = [m for m in ha.etcd_members() if m != leader]
    survivor = leader
    try:
        ha.kill_etcd_member(first)
        waiting.wait_for(lambda: (not ha.etcd_member_healthy(first), None),
                         what=f"{first} down", timeout_s=30)
        waiting.wait_for(lambda: (not _write_fails(ha), None),
                         what="writes with 2 of 3 members", timeout_s=30, interval_s=1)

        ha.kill_etcd_member(second)
        waiting.wait_for(lambda: (not ha.etcd_member_healthy(survivor), None),
                         what=f"{survivor} to report no quorum", timeout_s=30, interval_s=0.5)
        assert _write_fails(ha)
    finally:
        ha.restart_etcd_member(first)
        ha.restart_etcd_member(second)
    ha.wait_etcd_healthy(timeout_s=120)
    waiting.wait_for(lambda: (not _write_fails(ha), None),
                     what="writes after the quorum is back", timeout_s=120, interval_s=1)
    _wait_apiservers_ready(ha)


def test_restarted_control_plane_node_keeps_its_address_and_member(ha: KindCluster) -> None:
    _wait_apiservers_ready(ha)
    plane = next(m for m in ha.etcd_members() if m != ha.etcd_leader())
    worker = ha.nodes_by_zone()["zone-a"][0]
    victims = [plane, worker]
    before = {v: docker.addresses(v) for v in victims}
    ha.stop_nodes(victims)
    try:
        waiting.wait_for(lambda: _writes_go_on(ha),
                         what="writes with one control-plane node stopped", timeout_s=120,
                         interval_s=1)
    finally:
        # highest address first: unpinned, docker would hand it the lower free one
        for victim in sorted(victims, key=lambda v: ipaddress.ip_address(before[v][0]),
                             reverse=True):
            ha.start_nodes([victim])
    assert {v: docker.addresses(v) for v in victims} == before
    ha.wait_etcd_healthy(timeout_s=180)
    ha.wait_nodes(victims, ready=True, timeout_s=180)
