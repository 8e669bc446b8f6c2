"""Deletes judged by the audit log's own order against the deleters' Lease writes."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from zoneproof.measure import deletes_not_after_own_lease_write, lease_writes, pod_deletions

T0 = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def _event(ms: float, user: str, verb: str, resource: str, name: str, *,
           code: int = 200) -> str:
    at = (T0 + dt.timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")
    return json.dumps({"stage": "ResponseComplete", "verb": verb, "user": {"username": user},
                       "objectRef": {"resource": resource, "namespace": "default", "name": name},
                       "requestReceivedTimestamp": at, "responseStatus": {"code": code}})


def _judge(tmp_path: Path, lines: list[str]) -> list[str]:
    log = tmp_path / "audit.log"
    log.write_text("\n".join(lines) + "\n")
    writes = lease_writes(log, namespace="default", name="hac", users_prefix="zp-hac")
    deletes = pod_deletions(log, users_prefix="zp-hac")
    return [f"{u.deletion.user}:{u.deletion.pod}:{u.holder}" for u in
            deletes_not_after_own_lease_write(deletes, writes, users_prefix="zp-hac")]


def test_delete_4ms_before_taking_the_lease_is_caught(tmp_path: Path) -> None:
    found = _judge(tmp_path, [
        _event(0, "zp-hac-1", "update", "leases", "hac"),  # the old leader's last renewal
        _event(9000, "zp-hac-0", "delete", "pods", "p"),
        _event(9004, "zp-hac-0", "update", "leases", "hac"),
    ])
    assert found == ["zp-hac-0:p:zp-hac-1"]


def test_delete_after_own_write_passes_and_failed_writes_do_not_count(tmp_path: Path) -> None:
    assert _judge(tmp_path, [
        _event(0, "zp-hac-0", "create", "leases", ""),  # a create may be audited without name
        _event(5, "zp-hac-0", "delete", "pods", "p"),
        _event(6, "zp-hac-1", "update", "leases", "hac", code=409),
        _event(7, "zp-hac-0", "delete", "pods", "q"),
    ]) == []


def test_other_leases_and_a_later_holder_count(tmp_path: Path) -> None:
    found = _judge(tmp_path, [
        _event(0, "zp-hac-0", "update", "leases", "other-test"),
        _event(1, "zp-hac-0", "delete", "pods", "p"),
        _event(2, "zp-hac-0", "update", "leases", "hac"),
        _event(3, "zp-hac-1", "update", "leases", "hac"),
        _event(4, "zp-hac-0", "delete", "pods", "q"),
    ])
    assert found == ["zp-hac-0:p:", "zp-hac-0:q:zp-hac-1"]
