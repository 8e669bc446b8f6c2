"""etcd quorum on a private bed: one member lost is survivable, two is not, nothing is lost."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.cluster.interface import Capability, Cluster

pytestmark = pytest.mark.destructive
_WRITE_TIMEOUT_S = 5


class Writer:
    """Writes numbered ConfigMaps and remembers each one the API server acknowledged."""

    def __init__(self, bed: Cluster) -> None:
        self.core = client.CoreV1Api(kube.api_client(bed.kubeconfig, retries=0))
        self.core.create_namespace({"metadata": {"name": "writes"}})
        self.acknowledged: list[str] = []
        self._next = 0

    def write(self) -> None:
        """One write; raises if the API server does not acknowledge it."""
        name = f"w-{self._next}"
        self._next += 1
        self.core.create_namespaced_config_map(
            "writes", {"metadata": {"name": name}, "data": {"n": name}},
            _request_timeout=_WRITE_TIMEOUT_S)
        self.acknowledged.append(name)

    def write_until_ok(self, timeout_s: float, *, in_a_row: int = 1) -> float:
        """Write until ``in_a_row`` consecutive writes are acknowledged; the error window.

        The window ends at the first write of that final streak: after a member dies the
        API server's etcd client may still send a request to it once in a while.
        """
        start = time.monotonic()
        streak: list[float] = []

        def probe() -> tuple[bool, str]:
            attempt = time.monotonic()
            try:
                self.write()
            except (client.ApiException, urllib3.exceptions.HTTPError) as exc:
                streak.clear()
                return False, f"write failed: {type(exc).__name__}"
            streak.append(attempt)
            return len(streak) >= in_a_row, f"{len(streak)} acknowledged in a row"

        waiting.wait_for(probe, what=f"{in_a_row} acknowledged writes in a row",
                         timeout_s=timeout_s, interval_s=0.1)
        return streak[0] - start

    def missing(self) -> list[str]:
        """Acknowledged writes that cannot be read back."""
        stored = {c.metadata.name for c in self.core.list_namespaced_config_map("writes").items}
        return [n for n in self.acknowledged if n not in stored]


def _lose_one_member(bed: Cluster, writer: Writer, pick: Callable[[Cluster], str]) -> None:
    victim = pick(bed)
    bed.kill_etcd_member(victim)
    window = writer.write_until_ok(timeout_s=30, in_a_row=5)
    assert window < 30
    leader = waiting.wait_for(lambda: (True, bed.etcd_leader()), what="an etcd leader",
                              timeout_s=15, ignore=(errors.FaultError,))
    assert leader != victim
    print(f"killed {victim}: write-error window {window:.2f}s, leader now {leader}")
    bed.restart_etcd_member(victim)
    bed.wait_etcd_healthy()


def test_losing_the_leader_then_a_follower_keeps_writes_going(
        private_bed: Callable[..., Cluster]) -> None:
    bed = private_bed(needs=(Capability.ETCD_MEMBERS,))
    writer = Writer(bed)
    for _ in range(10):
        writer.write()
    _lose_one_member(bed, writer, lambda c: c.etcd_leader())
    _lose_one_member(bed, writer, lambda c: next(m for m in c.etcd_members()
                                                 if m != c.etcd_leader()))
    writer.write_until_ok(timeout_s=30)
    assert writer.missing() == []


def test_losing_two_members_stops_writes_and_readyz_until_restored(
        private_bed: Callable[..., Cluster]) -> None:
    bed = private_bed(needs=(Capability.ETCD_MEMBERS,))
    writer = Writer(bed)
    for _ in range(20):
        writer.write()
    victims = bed.etcd_members()[:2]
    for member in victims:
        bed.kill_etcd_member(member)
    waiting.wait_for(lambda: (not bed.apiserver_ready(), None), what="/readyz to fail",
                     timeout_s=30)
    with pytest.raises((client.ApiException, urllib3.exceptions.HTTPError)):
        writer.write()
    for member in victims:
        bed.restart_etcd_member(member)
    bed.wait_etcd_healthy()
    waiting.wait_for(lambda: (bed.apiserver_ready(), None), what="/readyz to recover",
                     timeout_s=60)
    writer.write_until_ok(timeout_s=30)
    assert writer.missing() == []
    assert len(writer.acknowledged) == 21
