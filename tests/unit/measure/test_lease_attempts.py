"""A standby's attempts on the Lease picked out of the audit log: reads and writes, whatever
their answer, by the replica (a pod with its ServiceAccount is the replica)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from zoneproof.measure import attempts_by, lease_requests, lease_writes
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
