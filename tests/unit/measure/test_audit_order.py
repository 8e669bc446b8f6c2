"""Deletes judged against the Lease's holder of record by the API server's own order."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from zoneproof.measure import (
    ApiOrder,
    deletes_by_non_holders,
    lease_writes,
    pod_deletions,
    read_records,
)

T0 = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def _stamp(ms: float) -> str:
    return (T0 + dt.timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")


def _event(ms: float, user: str, verb: str, resource: str, name: str, *, code: int = 200,
           took_ms: float = 2, revision: int | None = None, holder: str | None = None
           ) -> str:
    event: dict[str, Any] = {
        "stage": "ResponseComplete", "verb": verb, "user": {"username": user},
        "objectRef": {"resource": resource, "namespace": "default", "name": name},
        "requestReceivedTimestamp": _stamp(ms), "stageTimestamp": _stamp(ms + took_ms),
        "responseStatus": {"code": code}}
    if revision is not None:
        spec = {"holderIdentity": holder} if resource == "leases" else {}
        event["responseObject"] = {"kind": "Lease" if resource == "leases" else "Pod",
                                   "metadata": {"resourceVersion": str(revision)}, "spec": spec}
    return json.dumps(event)


def _judge(tmp_path: Path, lines: list[str]) -> tuple[list[str], list[str]]:
    log = tmp_path / "audit.log"
    log.write_text("\n".join(lines) + "\n")
    writes = lease_writes(log, namespace="default", name="hac")
    deletes = pod_deletions(log, users_prefix="zp-hac")
    found, undecided = deletes_by_non_holders(deletes, writes, users_prefix="zp-hac")
    return ([f"{u.deletion.user}:{u.deletion.pod}:{u.holder}" for u in found],
            [d.pod for d in undecided])


def test_delete_4ms_before_taking_the_lease_is_caught(tmp_path: Path) -> None:
    assert _judge(tmp_path, [
        _event(0, "zp-hac-1", "update", "leases", "hac"),  # the old leader's last renewal
        _event(9000, "zp-hac-0", "delete", "pods", "p"),
        _event(9004, "zp-hac-0", "update", "leases", "hac"),
    ]) == (["zp-hac-0:p:zp-hac-1"], [])


def test_delete_after_own_write_passes_and_failed_writes_do_not_count(tmp_path: Path) -> None:
    assert _judge(tmp_path, [
        _event(0, "zp-hac-0", "create", "leases", ""),  # a create may be audited without name
        _event(5, "zp-hac-0", "delete", "pods", "p"),
        _event(8, "zp-hac-1", "update", "leases", "hac", code=409),
        _event(11, "zp-hac-0", "delete", "pods", "q"),
    ]) == ([], [])


def test_other_leases_and_a_later_holder_count(tmp_path: Path) -> None:
    assert _judge(tmp_path, [
        _event(0, "zp-hac-0", "update", "leases", "other-test"),
        _event(10, "zp-hac-0", "delete", "pods", "p"),
        _event(20, "zp-hac-0", "update", "leases", "hac"),
        _event(30, "zp-hac-1", "update", "leases", "hac"),
        _event(40, "zp-hac-0", "delete", "pods", "q"),
    ]) == (["zp-hac-0:p:", "zp-hac-0:q:zp-hac-1"], [])


def test_a_release_ends_the_tenure_when_the_record_holds_the_lease(tmp_path: Path) -> None:
    assert _judge(tmp_path, [
        _event(0, "zp-hac-0", "update", "leases", "hac", revision=10, holder="zp-hac-0"),
        _event(10, "zp-hac-0", "delete", "pods", "p", revision=11),
        _event(20, "zp-hac-0", "update", "leases", "hac", revision=12, holder=""),
        _event(30, "zp-hac-0", "delete", "pods", "q", revision=13),
    ]) == (["zp-hac-0:q:"], [])


def test_revisions_order_what_overlapping_spans_cannot(tmp_path: Path) -> None:
    # the take-over's span overlaps the delete's: the revisions say the delete came first
    lines = [_event(0, "zp-hac-0", "update", "leases", "hac", revision=10, holder="zp-hac-0"),
             _event(100, "zp-hac-1", "update", "leases", "hac", took_ms=20, revision=13,
                    holder="zp-hac-1"),
             _event(105, "zp-hac-0", "delete", "pods", "p", took_ms=20, revision=12)]
    assert _judge(tmp_path, lines) == ([], [])
    later = [*lines[:2], _event(105, "zp-hac-0", "delete", "pods", "p", took_ms=20,
                                revision=14)]
    assert _judge(tmp_path, later) == (["zp-hac-0:p:zp-hac-1"], [])


def test_overlapping_spans_without_revisions_are_undecided_not_guessed(tmp_path: Path) -> None:
    assert _judge(tmp_path, [
        _event(0, "zp-hac-0", "update", "leases", "hac"),
        _event(100, "zp-hac-1", "update", "leases", "hac", took_ms=20),
        _event(105, "zp-hac-0", "delete", "pods", "p", took_ms=3),  # a 404: no revision
    ]) == ([], ["p"])


def test_a_watcher_lagging_seconds_changes_nothing(tmp_path: Path) -> None:
    """The certify failure of issue 27: the replica wrote the Lease, then deleted; a Lease
    watcher saw the write late. The API server's record alone decides: no violation."""
    assert _judge(tmp_path, [
        _event(0, "someone-else", "create", "leases", "hac", revision=5, holder="previous"),
        _event(7000, "zp-hac-0", "update", "leases", "hac", revision=20, holder="zp-hac-0"),
        _event(7003, "zp-hac-0", "delete", "pods", "missed", revision=21),
    ]) == ([], [])


def test_spans_order_requests_and_say_when_they_cannot() -> None:
    a = ApiOrder(T0, T0 + dt.timedelta(milliseconds=5))
    b = ApiOrder(T0 + dt.timedelta(milliseconds=6), T0 + dt.timedelta(milliseconds=9))
    c = ApiOrder(T0 + dt.timedelta(milliseconds=4), T0 + dt.timedelta(milliseconds=7))
    assert (a.before(b), b.before(a), a.before(c), c.before(b)) == (True, False, None, None)
    assert ApiOrder(T0, T0, 3).before(ApiOrder(T0, T0, 2)) is False


def test_records_are_read_on_from_an_offset_and_a_partial_line_waits(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    first = _event(0, "zp-hac-0", "delete", "pods", "p", revision=3)
    log.write_text(first + "\n" + _event(5, "zp-hac-0", "delete", "pods", "q")[:40])
    records, offset = read_records(log)
    assert [r.name for r in records] == ["p"] and records[0].order.revision == 3
    log.write_text(first + "\n" + _event(5, "zp-hac-0", "delete", "pods", "q") + "\n")
    more, _ = read_records(log, offset=offset)
    assert [r.name for r in more] == ["q"]
