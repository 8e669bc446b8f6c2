"""The proof a fault took effect: observed while it was on, or the verdict fails."""

from __future__ import annotations

from collections.abc import Callable

from zoneproof.cluster.spec import Timings
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.faults import Effect, FaultRecord
from zoneproof.faults.effects import StatedTimings, bounds
from zoneproof.measure import Timeline
from zoneproof.slo import effect_checks, judge

TimelineOf = Callable[[list[tuple[float, str, str, dict[str, str]]]], Timeline]
#: The local bed's: node-monitor-grace 8 s, period 1 s, node lease 4 s, etcd election 1 s,
#: controller Lease 6 s / retry 1 s.
TIMINGS = StatedTimings.of(Timings(), ControllerSettings(namespaces=()), source="test")


def _fault(*effect: Effect, targets: tuple[str, ...] = ("a1", "a2"),
           reverted_at: float | None = 30.0, in_force_at: float | None = None) -> FaultRecord:
    return FaultRecord("some-fault", effect, targets, 10.0, reverted_at, in_force_at)


def test_nodes_not_ready_needs_every_target(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.NODES_NOT_READY)
    one = timeline_of([(1, "node_ready", "a1", {"status": "True"}),
                        (15, "node_ready", "a1", {"status": "Unknown"})])
    assert effect_checks.observed_at(Effect.NODES_NOT_READY, fault, one.events, TIMINGS) is None
    both = timeline_of([(15, "node_ready", "a1", {"status": "Unknown"}),
                         (17, "node_ready", "a2", {"status": "False"})])
    assert effect_checks.observed_at(Effect.NODES_NOT_READY, fault, both.events, TIMINGS) == 17


def test_an_effect_over_before_the_fault_does_not_count(timeline_of: TimelineOf) -> None:
    early = timeline_of([(5, "node_ready", "a1", {"status": "Unknown"}),
                          (6, "node_ready", "a2", {"status": "Unknown"}),
                          (8, "node_ready", "a2", {"status": "True"})])
    [check] = effect_checks.check([_fault(Effect.NODES_NOT_READY)], early.events, TIMINGS)
    assert not check.effective and "never observed" in check.message
    failed_before = timeline_of([(5, "admission_failed", "ns/create", {"selected": "True"})])
    [check] = effect_checks.check([_fault(Effect.WEBHOOK_DOWN)], failed_before.events, TIMINGS)
    assert not check.effective, "an occurrence counts only after the injection"


def test_a_state_that_holds_at_injection_counts_from_it(timeline_of: TimelineOf) -> None:
    """A drain of nodes an earlier cordon made unschedulable leaves them cordoned."""
    cordoned = timeline_of([(1, "node_schedulable", n, {"schedulable": "True"}) for n in ("a1", "a2")]
                            + [(4, "node_schedulable", n, {"schedulable": "False"})
                               for n in ("a1", "a2")])
    fault = _fault(Effect.NODES_CORDONED)
    assert effect_checks.observed_at(Effect.NODES_CORDONED, fault, cordoned.events, TIMINGS) == 10


def test_an_effect_seen_long_after_the_revert_does_not_count(timeline_of: TimelineOf) -> None:
    short = _fault(Effect.NODES_NOT_READY, targets=("a1",), reverted_at=12.0)
    late = timeline_of([(12 + effect_checks.GRACE_S + 1, "node_ready", "a1", {"status": "Unknown"})])
    [check] = effect_checks.check([short], late.events, TIMINGS)  # 8 s after: within its bound
    assert check.observed_at is not None and not check.effective
    assert "after the fault ended" in check.message
    assert judge({"status": "completed"}, (), [check]).findings[-1].kind == "fault-not-effective"


def test_quorum_lost_needs_every_member_unhealthy_at_once(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.ETCD_QUORUM_LOST, targets=("m0", "m1"))
    members = [(1, "etcd_member", m, {"healthy": "True"}) for m in ("m0", "m1", "m2")]
    partial = timeline_of([*members, (11, "etcd_member", "m0", {"healthy": "False"}),
                            (11.5, "etcd_member", "m1", {"healthy": "False"})])
    assert effect_checks.observed_at(Effect.ETCD_QUORUM_LOST, fault, partial.events, TIMINGS) is None
    lost = timeline_of([*members, (11, "etcd_member", "m0", {"healthy": "False"}),
                         (11.5, "etcd_member", "m1", {"healthy": "False"}),
                         (12, "etcd_member", "m2", {"healthy": "False"})])
    assert effect_checks.observed_at(Effect.ETCD_QUORUM_LOST, fault, lost.events, TIMINGS) == 12


def test_leader_lost_once_the_lease_leaves_the_target(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.CONTROLLER_LEADER_LOST, targets=("zp-hac-0",))
    held = timeline_of([(1, "lease_holder", "ns/l", {"holder": "zp-hac-0"})])
    assert effect_checks.observed_at(Effect.CONTROLLER_LEADER_LOST, fault, held.events, TIMINGS) is None
    moved = timeline_of([(1, "lease_holder", "ns/l", {"holder": "zp-hac-0"}),
                          (16, "lease_holder", "ns/l", {"holder": ""})])
    assert effect_checks.observed_at(Effect.CONTROLLER_LEADER_LOST, fault, moved.events, TIMINGS) == 16


def test_webhook_down_needs_a_failed_selected_admission(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.WEBHOOK_DOWN, targets=("https://h",))
    unselected = timeline_of([(12, "admission_failed", "ns/create", {"selected": "False"})])
    assert effect_checks.observed_at(Effect.WEBHOOK_DOWN, fault, unselected.events, TIMINGS) is None
    selected = timeline_of([(12, "admission_failed", "ns/create", {"selected": "True"})])
    assert effect_checks.observed_at(Effect.WEBHOOK_DOWN, fault, selected.events, TIMINGS) == 12


def test_drained_when_every_pod_on_a_target_goes(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.NODES_DRAINED, targets=("a1",))
    pods = [(1, "pod_scheduled", "ns/db-0", {"uid": "u0", "node": "a1"}),
            (1, "pod_scheduled", "ns/db-1", {"uid": "u1", "node": "a1"}),
            (2, "pod_scheduled", "ns/db-2", {"uid": "u2", "node": "b1"}),
            (3, "pod_deleted", "ns/db-1", {"uid": "u1"})]  # gone before the drain
    one_left = timeline_of([*pods, (14, "pod_scheduled", "ns/db-0", {"uid": "u9", "node": "b1"})])
    assert effect_checks.observed_at(Effect.NODES_DRAINED, fault, one_left.events, TIMINGS) is None
    drained = timeline_of([*pods, (14, "pod_deleting", "ns/db-0", {"uid": "u0"})])
    assert effect_checks.observed_at(Effect.NODES_DRAINED, fault, drained.events, TIMINGS) == 14
    empty = timeline_of([(2, "pod_scheduled", "ns/x", {"uid": "x", "node": "b1"})])
    assert effect_checks.observed_at(Effect.NODES_DRAINED, fault, empty.events, TIMINGS) == 10, \
        "nothing to drain: drained when it began"


def test_a_fault_still_on_counts_until_the_timeline_ends(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.NODES_CORDONED, targets=("a1",), reverted_at=None)
    timeline = timeline_of([(20, "node_schedulable", "a1", {"schedulable": "False"})])
    [check] = effect_checks.check([fault], timeline.events, TIMINGS)
    assert check.effective
    assert effect_checks.EffectCheck.from_dict(check.to_dict()) == check


def test_an_effect_seen_later_than_its_bound_is_not_effective(timeline_of: TimelineOf) -> None:
    """NotReady within node-monitor-grace-period + period + margins (8 + 1 + 10 s)."""
    bound = bounds(TIMINGS)[Effect.NODES_NOT_READY]
    assert bound.seconds == 19 and "node-monitor-grace-period 8 s" in bound.derivation
    fault = _fault(Effect.NODES_NOT_READY, targets=("a1",), reverted_at=60.0)
    slow = timeline_of([(10 + 20, "node_ready", "a1", {"status": "Unknown"})])
    [check] = effect_checks.check([fault], slow.events, TIMINGS)
    assert not check.effective and check.after_s == 20 and check.bound_s == 19
    assert "later than its bound 19 s" in check.message
    assert judge({"status": "completed"}, (), [check]).findings[-1].kind == "fault-not-effective"
    quick = timeline_of([(10 + 9, "node_ready", "a1", {"status": "Unknown"})])
    [check] = effect_checks.check([fault], quick.events, TIMINGS)
    assert check.effective and "within 19 s" in check.message
    assert effect_checks.EffectCheck.from_dict(check.to_dict()) == check


def test_bounds_follow_the_stated_timings() -> None:
    upstream = StatedTimings.of(Timings.upstream(), ControllerSettings(namespaces=()))
    assert bounds(upstream)[Effect.NODES_NOT_READY].seconds == 50 + 5 + 5 + 5
    local = bounds(TIMINGS)
    assert local[Effect.CONTROLLER_LEADER_LOST].seconds == 6 + 2 * 2.2 + 2 + 5
    assert local[Effect.ETCD_LEADER_CHANGED].seconds == 2 * 1 + 5
    assert local[Effect.KUBELETS_STOPPED].seconds == 4 + 5
    assert set(local) == set(Effect)


def _beats(node: str, *times: float) -> list[tuple[float, str, str, dict[str, str]]]:
    return [(t, "node_heartbeat", node, {}) for t in times]


def test_kubelets_stopped_when_their_heartbeats_end_while_others_go_on(
        timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.KUBELETS_STOPPED, targets=("a1",))
    beats = _beats("b1", *range(1, 30))
    stopped = timeline_of([*_beats("a1", 7, 8, 9, 10.5), *beats])  # 10.5: sent before 10
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, fault, stopped.events, TIMINGS) == 14
    still_beating = timeline_of([*_beats("a1", 7, 8, 9, 12), *beats])
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, fault, still_beating.events,
                               TIMINGS) is None
    never_seen = timeline_of(beats)
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, fault, never_seen.events,
                               TIMINGS) is None, "silence of a node never seen beating"
    recorder_dead = timeline_of([*_beats("a1", 7, 8, 9), *_beats("b1", 7, 8, 9)])
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, fault, recorder_dead.events,
                               TIMINGS) is None, "nobody's heartbeat: the recorder may be dead"
    short = _fault(Effect.KUBELETS_STOPPED, targets=("a1",), reverted_at=11.0)
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, short, stopped.events, TIMINGS) is None


def test_kubelets_stopped_counts_from_the_fault_in_force(timeline_of: TimelineOf) -> None:
    """Through a node agent the kubelet stops seconds after the command (zone-outage on a
    plain kind cluster: a target beat 1.3 s after the injection): its silence is counted
    from the fault in force, and the bound too; a kubelet still beating after that is not
    stopped, however late the injection returned."""
    fault = _fault(Effect.KUBELETS_STOPPED, targets=("a1",), in_force_at=13.0)
    others = _beats("b1", *range(1, 30))
    agent = timeline_of([*_beats("a1", 8, 9, 10, 11.3, 12.3, 13.5), *others])  # 13.5: in flight
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, fault, agent.events, TIMINGS) == 17
    [check] = effect_checks.check([fault], agent.events, TIMINGS)
    assert check.effective and check.after_s == 7, check.message
    assert "in force 3.0 s after it" in check.message and "within 9 s" in check.message
    beating = timeline_of([*_beats("a1", 8, 9, 10, 11.3, 12.3, 14.2), *others])
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, fault, beating.events, TIMINGS) is None
    at_injection = _fault(Effect.KUBELETS_STOPPED, targets=("a1",))
    assert effect_checks.observed_at(Effect.KUBELETS_STOPPED, at_injection, agent.events,
                               TIMINGS) is None, "judged from the injection it beat on"


def test_an_effects_bound_counts_from_the_fault_in_force(timeline_of: TimelineOf) -> None:
    """NotReady 21 s after the injection: late for a fault in force at once (bound 19 s),
    in time for one an agent confirmed 3 s after the command."""
    slow = timeline_of([(10 + 21, "node_ready", "a1", {"status": "Unknown"})])
    [at_once] = effect_checks.check([_fault(Effect.NODES_NOT_READY, targets=("a1",), reverted_at=60.0)],
                              slow.events, TIMINGS)
    assert not at_once.effective and "from the fault in force" in at_once.message
    [agent] = effect_checks.check([_fault(Effect.NODES_NOT_READY, targets=("a1",), reverted_at=60.0,
                                    in_force_at=13.0)], slow.events, TIMINGS)
    assert agent.effective and agent.after_s == 21, agent.message


def test_etcd_leader_changed_to_another_member(timeline_of: TimelineOf) -> None:
    fault = _fault(Effect.ETCD_LEADER_CHANGED, targets=("m0",))
    none_yet = timeline_of([(1, "etcd_leader", "etcd", {"leader": "m0"}),
                            (10.5, "etcd_leader", "etcd", {"leader": ""})])
    assert effect_checks.observed_at(Effect.ETCD_LEADER_CHANGED, fault, none_yet.events,
                               TIMINGS) is None
    moved = timeline_of([(1, "etcd_leader", "etcd", {"leader": "m0"}),
                         (10.5, "etcd_leader", "etcd", {"leader": ""}),
                         (11.6, "etcd_leader", "etcd", {"leader": "m2"})])
    assert effect_checks.observed_at(Effect.ETCD_LEADER_CHANGED, fault, moved.events, TIMINGS) == 11.6


def test_names_unresolved_needs_every_resolver_that_was_ready(timeline_of: TimelineOf) -> None:
    """The DNS outage took effect only when every resolver pod Ready before it lost its
    lookups after the injection; none Ready before proves nothing."""
    fault = _fault(Effect.NAMES_UNRESOLVED, targets=("kube-system/coredns",))
    ready = [(1, "pod_readiness", p, {"ready": "True"}) for p in ("ns/r-1", "ns/r-2")]
    one = timeline_of([*ready, (12, "pod_readiness", "ns/r-1", {"ready": "False"})])
    assert effect_checks.observed_at(Effect.NAMES_UNRESOLVED, fault, one.events, TIMINGS) is None
    both = timeline_of([*ready, (12, "pod_readiness", "ns/r-1", {"ready": "False"}),
                        (13, "pod_readiness", "ns/r-2", {"ready": "False"})])
    assert effect_checks.observed_at(Effect.NAMES_UNRESOLVED, fault, both.events, TIMINGS) == 13
    before = timeline_of([*ready, (5, "pod_readiness", "ns/r-1", {"ready": "False"}),
                          (13, "pod_readiness", "ns/r-2", {"ready": "False"})])
    assert effect_checks.observed_at(Effect.NAMES_UNRESOLVED, fault, before.events,
                                     TIMINGS) == 13, "one not Ready before the fault is no target"
    none = timeline_of([(12, "pod_readiness", "ns/r-1", {"ready": "False"})])
    [check] = effect_checks.check([fault], none.events, TIMINGS)
    assert not check.effective, "no resolver Ready before: the outage proved nothing"
