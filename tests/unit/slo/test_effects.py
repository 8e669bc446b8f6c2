"""The proof a fault took effect: observed while it was on, or the verdict fails."""

from __future__ import annotations

from collections.abc import Callable

from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import Timeline
from zoneproof.slo import effects, judge

TimelineOf = Callable[[list[tuple[float, str, str, dict[str, str]]]], Timeline]


def _fault(*effect: Effect, targets: tuple[str, ...] = ("a1", "a2"),
           reverted_at: float | None = 30.0) -> FaultRecord:
    return FaultRecord("some-fault", effect, targets, 10.0, reverted_at)


def test_nodes_not_ready_needs_every_target(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.NODES_NOT_READY)
    one = timeline_of([(1, "node_ready", "a1", {"status": "True"}),
                        (15, "node_ready", "a1", {"status": "Unknown"})])
    assert effects.observed_at(Effect.NODES_NOT_READY, fault, one.events) is None
    both = timeline_of([(15, "node_ready", "a1", {"status": "Unknown"}),
                         (17, "node_ready", "a2", {"status": "False"})])
    assert effects.observed_at(Effect.NODES_NOT_READY, fault, both.events) == 17


def test_an_effect_over_before_the_fault_does_not_count(timeline_of: TimelineOf) -> None:
    early = timeline_of([(5, "node_ready", "a1", {"status": "Unknown"}),
                          (6, "node_ready", "a2", {"status": "Unknown"}),
                          (8, "node_ready", "a2", {"status": "True"})])
    [check] = effects.check([_fault(Effect.NODES_NOT_READY)], early.events)
    assert not check.effective and "never observed" in check.message
    failed_before = timeline_of([(5, "admission_failed", "ns/create", {"selected": "True"})])
    [check] = effects.check([_fault(Effect.WEBHOOK_DOWN)], failed_before.events)
    assert not check.effective, "an occurrence counts only after the injection"


def test_a_state_that_holds_at_injection_counts_from_it(timeline_of: TimelineOf) -> None:
    """A drain of nodes an earlier cordon made unschedulable leaves them cordoned."""
    cordoned = timeline_of([(1, "node_schedulable", n, {"schedulable": "True"}) for n in ("a1", "a2")]
                            + [(4, "node_schedulable", n, {"schedulable": "False"})
                               for n in ("a1", "a2")])
    fault = _fault(Effect.NODES_CORDONED)
    assert effects.observed_at(Effect.NODES_CORDONED, fault, cordoned.events) == 10


def test_an_effect_seen_long_after_the_revert_does_not_count(timeline_of: TimelineOf) -> None:
    late = timeline_of([(30 + effects.GRACE_S + 1, "etcd_member", "m1", {"healthy": "False"})])
    [check] = effects.check([_fault(Effect.ETCD_MEMBERS_DOWN, targets=("m1",))], late.events)
    assert check.observed_at is not None and not check.effective
    assert "after the fault ended" in check.message
    assert judge({"status": "completed"}, (), [check]).findings[-1].kind == "fault-not-effective"


def test_quorum_lost_needs_every_member_unhealthy_at_once(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.ETCD_QUORUM_LOST, targets=("m0", "m1"))
    members = [(1, "etcd_member", m, {"healthy": "True"}) for m in ("m0", "m1", "m2")]
    partial = timeline_of([*members, (11, "etcd_member", "m0", {"healthy": "False"}),
                            (11.5, "etcd_member", "m1", {"healthy": "False"})])
    assert effects.observed_at(Effect.ETCD_QUORUM_LOST, fault, partial.events) is None
    lost = timeline_of([*members, (11, "etcd_member", "m0", {"healthy": "False"}),
                         (11.5, "etcd_member", "m1", {"healthy": "False"}),
                         (12, "etcd_member", "m2", {"healthy": "False"})])
    assert effects.observed_at(Effect.ETCD_QUORUM_LOST, fault, lost.events) == 12


def test_leader_lost_once_the_lease_leaves_the_target(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.CONTROLLER_LEADER_LOST, targets=("zp-hac-0",))
    held = timeline_of([(1, "lease_holder", "ns/l", {"holder": "zp-hac-0"})])
    assert effects.observed_at(Effect.CONTROLLER_LEADER_LOST, fault, held.events) is None
    moved = timeline_of([(1, "lease_holder", "ns/l", {"holder": "zp-hac-0"}),
                          (16, "lease_holder", "ns/l", {"holder": ""})])
    assert effects.observed_at(Effect.CONTROLLER_LEADER_LOST, fault, moved.events) == 16


def test_webhook_down_needs_a_failed_selected_admission(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.WEBHOOK_DOWN, targets=("https://h",))
    unselected = timeline_of([(12, "admission_failed", "ns/create", {"selected": "False"})])
    assert effects.observed_at(Effect.WEBHOOK_DOWN, fault, unselected.events) is None
    selected = timeline_of([(12, "admission_failed", "ns/create", {"selected": "True"})])
    assert effects.observed_at(Effect.WEBHOOK_DOWN, fault, selected.events) == 12


def test_drained_when_every_pod_on_a_target_goes(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.NODES_DRAINED, targets=("a1",))
    pods = [(1, "pod_scheduled", "ns/db-0", {"uid": "u0", "node": "a1"}),
            (1, "pod_scheduled", "ns/db-1", {"uid": "u1", "node": "a1"}),
            (2, "pod_scheduled", "ns/db-2", {"uid": "u2", "node": "b1"}),
            (3, "pod_deleted", "ns/db-1", {"uid": "u1"})]  # gone before the drain
    one_left = timeline_of([*pods, (14, "pod_scheduled", "ns/db-0", {"uid": "u9", "node": "b1"})])
    assert effects.observed_at(Effect.NODES_DRAINED, fault, one_left.events) is None
    drained = timeline_of([*pods, (14, "pod_deleting", "ns/db-0", {"uid": "u0"})])
    assert effects.observed_at(Effect.NODES_DRAINED, fault, drained.events) == 14
    empty = timeline_of([(2, "pod_scheduled", "ns/x", {"uid": "x", "node": "b1"})])
    assert effects.observed_at(Effect.NODES_DRAINED, fault, empty.events) == 10, \
        "nothing to drain: drained when it began"


def test_a_fault_still_on_counts_until_the_timeline_ends(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.NODES_CORDONED, targets=("a1",), reverted_at=None)
    timeline = timeline_of([(40, "node_schedulable", "a1", {"schedulable": "False"})])
    [check] = effects.check([fault], timeline.events)
    assert check.effective
    assert effects.EffectCheck.from_dict(check.to_dict()) == check
