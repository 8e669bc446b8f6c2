"""Attribution of audited deletes to Lease tenures: pure, on hand-made timelines."""

import datetime as dt

from zoneproof.measure import PodDeletion, attribution
from zoneproof.measure.timeline import Event

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _at(s: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def _holder(s: float, holder: str) -> Event:
    return Event(s, _at(s).isoformat(), "lease_holder", "default/lease", {"holder": holder})


def _delete(s: float, user: str, pod: str = "p") -> PodDeletion:
    return PodDeletion(_at(s), user, "ns", pod, 200)


EVENTS = [_holder(0, "zp-hac-0"), _holder(10, ""), _holder(12, "zp-hac-1"),
          Event(5, _at(5).isoformat(), "node_ready", "n1", {"status": "Unknown"})]


def test_tenures_run_from_one_holder_change_to_the_next_and_skip_free_periods() -> None:
    found = attribution.tenures(EVENTS)
    assert [(t.holder, t.start, t.end) for t in found] == [
        ("zp-hac-0", _at(0), _at(10)), ("zp-hac-1", _at(12), None)]


def test_deletes_inside_own_tenure_are_fenced() -> None:
    deletes = [_delete(1, "zp-hac-0"), _delete(9.9, "zp-hac-0"), _delete(30, "zp-hac-1")]
    assert attribution.unfenced_deletes(deletes, EVENTS, users_prefix="zp-hac") == []


def test_a_delete_by_a_non_holder_names_the_holder_of_the_moment() -> None:
    found = attribution.unfenced_deletes([_delete(5, "zp-hac-1", "x")], EVENTS,
                                         users_prefix="zp-hac")
    assert [(u.deletion.pod, u.holder) for u in found] == [("x", "zp-hac-0")]
    assert "zp-hac-1 deleted ns/x" in found[0].describe()
    assert "'zp-hac-0'" in found[0].describe()


def test_a_delete_after_release_or_with_no_lease_at_all_is_unfenced() -> None:
    late = _delete(11, "zp-hac-0")
    assert [u.holder for u in attribution.unfenced_deletes([late], EVENTS,
                                                           users_prefix="zp-hac")] == [""]
    assert len(attribution.unfenced_deletes([_delete(1, "zp-hac-0")], [],
                                            users_prefix="zp-hac")) == 1


def test_tolerance_absorbs_watch_latency_at_both_ends_of_a_tenure() -> None:
    edges = [_delete(11.7, "zp-hac-1"), _delete(10.3, "zp-hac-0")]
    assert attribution.unfenced_deletes(edges, EVENTS, users_prefix="zp-hac") == []
    assert len(attribution.unfenced_deletes(edges, EVENTS, users_prefix="zp-hac",
                                            tolerance_s=0.1)) == 2


def test_users_outside_the_prefix_are_not_judged() -> None:
    others = [_delete(11, "zoneproof-kwok"), _delete(11, "system:serviceaccount:kube-system:x")]
    assert attribution.unfenced_deletes(others, EVENTS, users_prefix="zp-hac") == []
