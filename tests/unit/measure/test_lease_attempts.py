"""A standby's attempts on the Lease picked out of the audit log: reads and writes, whatever
their answer, by the replica (a pod with its ServiceAccount is the replica)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from zoneproof.measure import (
    LeaseRequest,
    attempts_after_seen_renewal,
    attempts_by,
    lease_requests,
    lease_writes,
)
from zoneproof.measure.audit import POD_NAME_EXTRA

T0 = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)
SA = "system:serviceaccount:zoneproof-system:ha-controller"


def _event(ms: float, user: dict[str, object] | str, verb: str, *, name: str = "hac",
           namespace: str = "default", resource: str = "leases", code: int = 200,
           stage: str = "ResponseComplete") -> str:
    at = (T0 + dt.timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")
    return json.dumps({"stage": stage, "verb": verb,
                       "user": {"username": user} if isinstance(user, str) else user,
                       "objectRef": {"resource": resource, "namespace": namespace, "name": name},
                       "requestReceivedTimestamp": at, "responseStatus": {"code": code}})


def _log(tmp_path: Path, lines: list[str]) -> Path:
    log = tmp_path / "audit.log"
    log.write_text("\n".join(lines) + '\n{"stage": "Respon')  # a line being written
    return log


def test_reads_and_failed_writes_are_attempts_in_the_servers_order(tmp_path: Path) -> None:
    log = _log(tmp_path, [
        _event(30, "zp-hac-1", "get"),                      # finds it held: an attempt
        _event(0, "zp-hac-1", "get", code=404),             # absent: an attempt
        _event(10, "zp-hac-1", "create", name="", code=409),  # lost the race
        _event(20, "zp-hac-0", "update"),
        _event(40, "zp-hac-1", "get", name="other-test"),   # another Lease
        _event(50, "zp-hac-1", "get", namespace="kube-system"),
        _event(60, "zp-hac-1", "list"),                     # not an attempt
        _event(70, "zp-hac-1", "delete", resource="pods", name="p"),
        _event(80, "zp-hac-1", "get", stage="ResponseStarted"),
        _event(90, "admin", "get"),                         # not a replica
    ])
    found = lease_requests(log, namespace="default", name="hac", users_prefix="zp-hac")
    assert [(r.user, r.verb, r.code) for r in found] == [
        ("zp-hac-1", "get", 404), ("zp-hac-1", "create", 409), ("zp-hac-0", "update", 200),
        ("zp-hac-1", "get", 200)]
    assert attempts_by(found, ["zp-hac-0", "zp-hac-1", "zp-hac-2"]) == {
        "zp-hac-0": 1, "zp-hac-1": 3, "zp-hac-2": 0}
    writes = lease_writes(log, namespace="default", name="hac", users_prefix="zp-hac")
    assert [(w.user, w.verb) for w in writes] == [("zp-hac-0", "update")]


def test_an_in_cluster_replica_is_its_pod(tmp_path: Path) -> None:
    log = _log(tmp_path, [
        _event(0, {"username": SA, "extra": {POD_NAME_EXTRA: ["hac-7d-a"]}}, "get"),
        _event(1, {"username": SA, "extra": {POD_NAME_EXTRA: ["hac-7d-b"]}}, "get"),
        _event(2, {"username": SA, "extra": {POD_NAME_EXTRA: ["hac-7d-b"]}}, "update"),
    ])
    found = lease_requests(log, namespace="default", name="hac", users_prefix="hac-")
    assert attempts_by(found, ["hac-7d-a", "hac-7d-b"]) == {"hac-7d-a": 1, "hac-7d-b": 2}


def test_no_audit_log_yet_is_no_attempt(tmp_path: Path) -> None:
    assert lease_requests(tmp_path / "absent.log", namespace="default", name="hac") == []


def _requests(tmp_path: Path, lines: list[str]) -> list[LeaseRequest]:
    return lease_requests(_log(tmp_path, lines), namespace="default", name="hac",
                          users_prefix="zp-hac")


def test_a_standby_that_keeps_trying_after_seeing_a_renewal(tmp_path: Path) -> None:
    found = _requests(tmp_path, [
        _event(0, "zp-hac-0", "create", name=""),
        _event(100, "zp-hac-1", "get"),       # finds it held
        _event(1000, "zp-hac-0", "get"),      # the leader reads before it renews
        _event(1005, "zp-hac-0", "update"),   # renews
        _event(1100, "zp-hac-1", "get"),      # could see the renewal
        _event(2100, "zp-hac-1", "get"),      # and still tries
        _event(3100, "zp-hac-1", "get"),
    ])
    assert attempts_after_seen_renewal(found, standby="zp-hac-1", leader="zp-hac-0") == 2


def test_a_standby_that_stops_once_it_saw_a_renewal(tmp_path: Path) -> None:
    found = _requests(tmp_path, [
        _event(0, "zp-hac-0", "create", name=""),   # before the standby's first attempt
        _event(100, "zp-hac-1", "get"),
        _event(1000, "zp-hac-0", "update", code=409),  # a failed write is no renewal
        _event(1100, "zp-hac-1", "get"),
        _event(2000, "zp-hac-0", "update"),
        _event(2100, "zp-hac-1", "get"),            # sees it: and stops
        _event(3000, "zp-hac-0", "update"),
        _event(4000, "zp-hac-0", "update"),
    ])
    assert attempts_after_seen_renewal(found, standby="zp-hac-1", leader="zp-hac-0") == 0
    # a standby that tried once and stopped, and one that never tried
    assert attempts_after_seen_renewal(found[:2], standby="zp-hac-1", leader="zp-hac-0") == 0
    assert attempts_after_seen_renewal(found, standby="zp-hac-2", leader="zp-hac-0") == 0
