"""A schedule's history from a real audit log (a sample kept from a local bed): every step
with its revision and what it left."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from zoneproof.conformance.ha_controller.history import History, Scope, _grace, from_records
from zoneproof.measure.audit import read_records

SAMPLE = Path(__file__).parents[3] / "data" / "controller-histories" / "audit-sample.jsonl"
SCOPE = Scope(frozenset({"zpm-56ba8d-0"}), frozenset({"zpm-56ba8d-w1", "zpm-56ba8d-w2",
                                                     "zpm-56ba8d-u"}),
              "default", "zpm-56ba8d", "zp-hac-m0-", "zp-model-executor",
              "zpm-56ba8d-w1/zpm-marker")


def _history() -> History:
    return from_records(read_records(SAMPLE)[0], SCOPE)


def test_the_record_holds_the_schedule_in_revision_order() -> None:
    steps = _history().steps
    kinds = [s.kind for s in steps]
    assert kinds[:5] == ["marker", "node", "node", "pod", "pod"]
    revisions = [s.order.revision for s in steps if s.order.revision is not None]
    assert revisions == sorted(revisions)
    nodes = [(s.node.ready, s.node.exists) for s in steps if s.node is not None]
    assert nodes == [("", True), ("True", True), ("Unknown", True), ("", False)], \
        "made, Ready, failed, deleted (the executor's clean-up)"


def test_a_force_delete_names_the_pod_it_removed_and_how_it_was_asked() -> None:
    delete = next(s for s in _history().steps if s.kind == "delete" and s.actor == "zp-hac-m0-1")
    assert delete.pod is not None and not delete.pod.exists
    assert (delete.grace, delete.grace_known, delete.target) == (0, True, "zpm-56ba8d-w1/p0")
    assert delete.uid_precondition == delete.pod.uid and delete.pod.node == "zpm-56ba8d-0"


def test_lease_writes_carry_their_holder_and_reads_are_attempts() -> None:
    steps = _history().steps
    leases = [(s.actor, s.holder, s.duration_s) for s in steps if s.kind == "lease"]
    assert leases[0] == ("zp-hac-m0-1", "zp-hac-m0-1", 6.0) and leases[-1][1] == ""
    attempts = {(s.actor, s.code) for s in steps if s.kind == "attempt"}
    assert ("zp-hac-m0-1", 404) in attempts and ("zp-hac-m0-0", 200) in attempts
    markers = [s.marker for s in steps if s.kind == "marker" and s.marker]
    assert "start zp-hac-m0-0" in markers and "exited zp-hac-m0-1 0" in markers


def test_a_history_round_trips_through_json(tmp_path: Path) -> None:
    history = _history()
    assert History.load(history.save(tmp_path / "h.json")).steps == history.steps


def _delete(code: int, request: dict[str, object] | None, uri: str = "") -> tuple[object, bool]:
    record = next(r for r in read_records(SAMPLE)[0] if r.verb == "delete")
    grace, known, _ = _grace(replace(record, code=code, request=request,
                                     uri=uri or "/api/v1/namespaces/n/pods/p"))
    return grace, known


def test_a_delete_the_api_server_refused_unread_does_not_say_its_grace() -> None:
    """A 5xx (etcd down) or 429 with no DeleteOptions logged: the body may never have been
    read, so no grace is judged; answered otherwise, no options logged means none asked."""
    assert _delete(503, None) == (None, False)
    assert _delete(429, None) == (None, False)
    assert _delete(200, None) == (None, True)  # no body sent: the pod's own grace
    assert _delete(404, None) == (None, True)
    assert _delete(503, {"gracePeriodSeconds": 30}) == (30, True)  # read before it failed
    assert _delete(503, None, "/api/v1/namespaces/n/pods/p?gracePeriodSeconds=0") == (0, True)
