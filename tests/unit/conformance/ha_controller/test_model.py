"""The controller model on hand-made histories: each rule passes a correct history and
fails the one wrong behaviour it names; what the record cannot decide stays undecided."""

from __future__ import annotations

from typing import Any

from zoneproof.conformance.ha_controller.model import RULES, Setup, Verdict, check

Builder = Any  # the conftest's history builder


def _leading(build: Builder, *, pods: int = 1) -> Builder:
    """Node n1 Ready with matching pods p0.., replicas started, r0 leads (r1 competing)."""
    build.node("n1").node("n2")
    for i in range(pods):
        build.pod(f"p{i}", "n1")
    return build.mark("start r0").mark("start r1").lease("r0").attempt("r1")


def _rules(build: Builder, setup: Setup) -> set[str]:
    return check(build.history(), setup).rules()


def test_a_transition_acted_on_in_time_passes_and_counts(build: Builder, setup: Setup) -> None:
    _leading(build, pods=2).at(1).node("n1", "Unknown").delete("r0", "p0").delete("r0", "p1")
    build.renewals("r0", 12).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.passed and verdict.required == 2, verdict


def test_a_transition_not_acted_on_fails_once_its_deadline_passed(build: Builder,
                                                                 setup: Setup) -> None:
    _leading(build).at(1).node("n1", "False").renewals("r0", 8).mark("tick -")
    early = check(build.history(), setup)
    assert not early.violations and early.undecided, "the deadline had not come: undecided"
    build.renewals("r0", 12).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"transition"}, verdict
    assert "not removed within 10s" in verdict.violations[0].message
    assert RULES["transition"].seed in verdict.violations[0].describe()


def test_a_delete_after_the_bound_is_late(build: Builder, setup: Setup) -> None:
    _leading(build).at(1).node("n1", "Unknown").renewals("r0", 11.5).delete("r0", "p0")
    build.mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"transition", "trigger"}, verdict  # late, and for no trigger
    assert verdict.first is not None and verdict.first.rule.id == "transition"


def test_a_flap_shorter_than_the_bound_requires_nothing_but_allows_the_delete(
        build: Builder, setup: Setup) -> None:
    _leading(build).at(1).node("n1", "False").at(1.5).node("n1", "True")
    build.renewals("r0", 12).mark("tick -")
    assert check(build.history(), setup).passed
    late = _leading(type(build)()).at(1).node("n1", "False").at(1.5).node("n1", "True")
    late.at(1.6).delete("r0", "p0").renewals("r0", 12).mark("tick -")
    assert check(late.history(), setup).passed


def test_every_phase_of_a_matching_pod_is_required(build: Builder, setup: Setup) -> None:
    build.node("n1").pod("pending", "n1", phase="Pending").pod("done", "n1", phase="Succeeded")
    build.pod("stuck", "n1", terminating=True).mark("start r0").lease("r0")
    build.at(1).node("n1", "Unknown").delete("r0", "pending").delete("r0", "done")
    build.renewals("r0", 12).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"transition"} and "stuck" in verdict.violations[0].message


def test_graceful_deletes_are_not_force_deletes(build: Builder, setup: Setup) -> None:
    _leading(build).at(1).node("n1", "Unknown").delete("r0", "p0", grace=None)
    build.renewals("r0", 12).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"force", "transition"}, verdict
    assert "terminating" in next(v.message for v in verdict.violations
                                 if v.rule.id == "transition")


def test_wrong_pods_are_forbidden_whatever_else_is_right(build: Builder, setup: Setup) -> None:
    _leading(build).pod("other", "n1", labels={"app": "noobaa-x"})
    build.pod("elsewhere", "n1", namespace="u").pod("neighbour", "n2")
    build.node("n2", "True", unschedulable=True)  # cordoned, but Ready
    build.at(1).node("n1", "Unknown").delete("r0", "p0").delete("r0", "other")
    build.delete("r0", "elsewhere", namespace="u").delete("r0", "neighbour")
    build.renewals("r0", 12).mark("tick -")
    verdict = check(build.history(), setup)
    assert [v.rule.id for v in verdict.violations] == ["selector", "namespace", "node"]


def test_a_standby_that_acts_is_not_the_leader(build: Builder, setup: Setup) -> None:
    _leading(build).at(1).node("n1", "Unknown").delete("r1", "p0").renewals("r0", 12)
    build.mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"leader"}, verdict


def test_a_catch_up_milliseconds_before_taking_the_lease_is_caught(build: Builder,
                                                                    setup: Setup) -> None:
    build.node("n1").pod("p0", "n1").lease("exec", "dead", duration=6)
    build.at(1).node("n1", "Unknown").mark("start r0").attempt("r0")
    build.at(8).delete("r0", "p0").lease("r0").renewals("r0", 20).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"leader"}, verdict
    assert "holder of record then 'dead'" in verdict.violations[0].message


def test_a_new_leader_catches_up_on_a_transition_nobody_acted_on(build: Builder,
                                                                  setup: Setup) -> None:
    build.node("n1").pod("p0", "n1").lease("exec", "dead", duration=6)
    build.at(1).node("n1", "Unknown").mark("start r0").attempt("r0")
    build.at(8).lease("r0").delete("r0", "p0").renewals("r0", 20).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.passed and verdict.required == 2, verdict  # the catch-up, the take-over
    missed = type(build)()
    missed.node("n1").pod("p0", "n1").lease("exec", "dead", duration=6)
    missed.at(1).node("n1", "Unknown").mark("start r0").attempt("r0")
    missed.at(8).lease("r0").renewals("r0", 20).mark("tick -")
    assert check(missed.history(), setup).rules() == {"new-leader"}


def test_a_pod_bound_long_after_the_transition_may_not_be_deleted_on_recovery(
        build: Builder, setup: Setup) -> None:
    _leading(build).at(1).node("n1", "Unknown").delete("r0", "p0")
    build.at(13).pod("late", "n1").at(14).node("n1", "True").delete("r0", "late")
    build.renewals("r0", 16).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"trigger"}, verdict


def test_not_ready_to_not_ready_is_no_transition(build: Builder, setup: Setup) -> None:
    """C1/C3: False -> Unknown (or back) is no Ready -> NotReady transition: a pod bound past
    the first transition's bound may not be deleted on it."""
    _leading(build).at(1).node("n1", "False").delete("r0", "p0")
    build.at(13).pod("late", "n1").at(14).node("n1", "Unknown").delete("r0", "late")
    build.renewals("r0", 16).mark("tick -")
    assert check(build.history(), setup).rules() == {"trigger"}


def test_a_node_made_again_not_ready_is_no_transition(build: Builder, setup: Setup) -> None:
    """C1/C3: a Node deleted and made again under its name starts with no old state (001: an
    update whose old state is Ready): its first NotReady explains no delete of the pods
    still bound to the name; a Ready -> NotReady of the new node does."""
    _leading(build).renewals("r0", 11).at(11.5).gone("n1")
    # made anew, the API server's admission (TaintNodesByCondition) taints it not-ready:
    # that is no fence landing on a node it knew
    build.node("n1", "", fenced=True).node("n1", "False", fenced=True)
    build.delete("r0", "p0").renewals("r0", 14).mark("tick -")
    assert _rules(build, setup) == {"trigger"}


def test_a_node_made_again_then_failing_must_be_acted_on(build: Builder, setup: Setup) -> None:
    _leading(build).at(1).gone("n1").node("n1", "Unknown").renewals("r0", 3)
    assert not check(build.history(), setup).violations, "no transition: nothing due"
    build.node("n1", "True").at(4).node("n1", "False").renewals("r0", 16).mark("tick -")
    assert _rules(build, setup) == {"transition"}
    _leading(fresh := type(build)()).at(1).gone("n1").node("n1", "Unknown").renewals("r0", 3)
    fresh.node("n1", "True").at(4).node("n1", "False").delete("r0", "p0")
    fresh.renewals("r0", 16).mark("tick -")
    assert check(fresh.history(), setup).passed


def test_a_pod_bound_soon_after_the_transition_or_before_the_fence_may_go(
        build: Builder, setup: Setup) -> None:
    _leading(build).at(1).node("n1", "Unknown").delete("r0", "p0")
    build.at(2).pod("soon", "n1").renewals("r0", 5).delete("r0", "soon")
    build.renewals("r0", 8).pod("before-fence", "n1").renewals("r0", 12)
    build.node("n1", "Unknown", fenced=True).delete("r0", "before-fence")
    build.renewals("r0", 16).mark("tick -")
    assert check(build.history(), setup).passed


def test_a_frozen_leader_that_acts_after_the_take_over_is_caught(build: Builder,
                                                                 setup: Setup) -> None:
    _leading(build).renewals("r0", 2).mark("sigstop r0").attempt("r1")
    build.at(9).lease("r1").renewals("r1", 10).node("n1", "Unknown").delete("r1", "p0")
    build.pod("p9", "n1").at(10.5).mark("sigcont r0").delete("r0", "p9")
    build.renewals("r1", 31).mark("tick -")
    verdict = check(build.history(), setup)
    assert {"leader", "exit-on-loss"} <= verdict.rules(), verdict


def test_a_frozen_leader_must_exit_non_zero_on_resuming(build: Builder, setup: Setup) -> None:
    def story(code: int | None) -> set[str]:
        b = type(build)()
        _leading(b).renewals("r0", 2).mark("sigstop r0").attempt("r1").at(9).lease("r1")
        b.mark("sigcont r0")
        if code is not None:
            b.at(9.5).mark(f"exited r0 {code}")
        return _rules(b.renewals("r1", 30).mark("tick -"), setup)

    assert story(1) == set() and story(0) == {"exit-on-loss"} and story(None) == {
        "exit-on-loss"}


def test_the_seeds_short_window_lets_a_decision_made_in_time_land_late(
        build: Builder, setup: Setup) -> None:
    """Frozen right after deciding: the delete of a pod of a node that failed while it led
    lands after the take-over (002: "There is a short window after a new master acquires
    the lease, during which data from the old master might be committed")."""
    _leading(build).renewals("r0", 2).node("n1", "Unknown").mark("sigstop r0").attempt("r1")
    build.at(9).lease("r1").delete("r1", "p0", code=404).mark("sigcont r0")
    build.delete("r0", "p0").mark("exited r0 1").renewals("r1", 30).mark("tick -")
    verdict = check(build.history(), setup)
    assert "leader" not in verdict.rules(), verdict


def test_taking_a_lease_before_its_duration_passed_is_a_steal(build: Builder,
                                                              setup: Setup) -> None:
    _leading(build).renewals("r0", 3).at(5).lease("r1").mark("tick -")
    assert _rules(build, setup) == {"steal"}
    fair = _leading(type(build)()).renewals("r0", 3).mark("sigkill r0").at(9.1).lease("r1")
    assert _rules(fair.renewals("r1", 25).mark("tick -"), setup) == set()


def test_a_standby_that_clears_a_live_holders_lease_steals_it(build: Builder,
                                                              setup: Setup) -> None:
    """Only the holder releases: a standby asked to stop that writes the Lease free while
    the leader renews it breaks the steal rule (002: "until the current leader releases")."""
    _leading(build).renewals("r0", 3).mark("sigterm r1").lease("r1", "").mark("exited r1 0")
    verdict = check(build.renewals("r0", 12).mark("tick -").history(), setup)
    assert "steal" in verdict.rules(), verdict
    assert "wrote holder ''" in verdict.violations[0].message
    quiet = _leading(type(build)()).renewals("r0", 3).mark("sigterm r1").mark("exited r1 0")
    assert _rules(quiet.renewals("r0", 12).mark("tick -"), setup) == set()


def test_a_leader_asked_to_stop_releases_and_a_standby_takes_over(build: Builder,
                                                                  setup: Setup) -> None:
    def story(*, release: bool, takeover: bool) -> set[str]:
        b = _leading(type(build)()).renewals("r0", 2).mark("sigterm r0")
        if release:
            b.lease("r0", "")
        b.mark("exited r0 0").at(3 if release else 9).attempt("r1")
        if takeover:
            b.lease("r1")
        return _rules(b.tries("r1", 30).mark("tick -"), setup)

    assert story(release=True, takeover=True) == set()
    assert story(release=False, takeover=True) == {"release"}
    assert story(release=True, takeover=False) == {"takeover"}


def test_a_standby_must_take_a_dead_leaders_lease_over(build: Builder, setup: Setup) -> None:
    _leading(build).renewals("r0", 2).mark("sigkill r0").mark("exited r0 -9")
    build.tries("r1", 30).mark("tick -")
    assert _rules(build, setup) == {"takeover"}


def test_a_lease_left_unrenewed_ends_the_right_to_act(build: Builder, setup: Setup) -> None:
    _leading(build).tries("r1", 8).node("n1", "Unknown").delete("r0", "p0").tries("r1", 20)
    build.mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.rules() == {"leader"}, verdict


def test_a_node_that_never_reported_may_be_acted_on_only_when_taking_the_lease(
        build: Builder, setup: Setup) -> None:
    build.node("n1", "").pod("p0", "n1").pod("p1", "n1").mark("start r0").lease("r0")
    build.delete("r0", "p0").renewals("r0", 15).delete("r0", "p1").mark("tick -")
    verdict = check(build.history(), setup)
    assert [v.rule.id for v in verdict.violations] == ["trigger"], verdict
    assert "p1" in verdict.violations[0].message


def test_what_the_record_cannot_say_is_undecided_never_passed(build: Builder,
                                                              setup: Setup) -> None:
    _leading(build).at(1).node("n1", "Unknown").delete("r0", "p0", grace_known=False)
    build.renewals("r0", 12).mark("tick -")
    verdict = check(build.history(), setup)
    assert not verdict.violations and not verdict.passed and verdict.undecided


def test_a_refused_delete_whose_grace_is_unknown_is_not_judged_on_grace(
        build: Builder, setup: Setup) -> None:
    """etcd down: the API server answers 503 before it reads the body; the retry that
    succeeds is what removes the pod and is judged (a graceful retry still fails)."""
    def story(retry_grace: int) -> Verdict:
        b = type(build)()
        _leading(b).at(1).node("n1", "Unknown")
        b.delete("r0", "p0", code=503, grace=None, grace_known=False)
        b.delete("r0", "p0", grace=retry_grace).renewals("r0", 12).mark("tick -")
        return check(b.history(), setup)

    verdict = story(0)
    assert verdict.passed, verdict
    assert "force" in {v.rule.id for v in story(30).violations}


def test_every_rule_cites_a_seed_sentence() -> None:
    for rule in RULES.values():
        assert rule.seed.startswith("seed 00") and '"' in rule.seed, rule.id


def test_a_frozen_leader_stopped_by_the_suite_is_judged_only_past_its_exit_time(
        build: Builder, setup: Setup) -> None:
    def story(stop_at: float) -> set[str]:
        b = type(build)()
        _leading(b).renewals("r0", 2).mark("sigstop r0").attempt("r1").at(9).lease("r1")
        b.mark("sigcont r0").at(stop_at).mark("sigterm r0").mark("exited r0 0")
        return _rules(b.renewals("r1", 40).mark("tick -"), setup)

    assert story(12) == set(), "asked to stop within its 19 s: not judged"
    assert story(30) == {"exit-on-loss"}, "still running past 19 s on its own"


def test_a_standby_that_exits_unasked_or_stops_trying_breaks_c8(build: Builder,
                                                               setup: Setup) -> None:
    _leading(build).renewals("r0", 2).mark("exited r1 0").renewals("r0", 12).mark("tick -")
    assert _rules(build, setup) == {"standby"}
    quiet = _leading(type(build)()).renewals("r0", 20).mark("tick -")
    verdict = check(quiet.history(), setup)
    assert verdict.rules() == {"standby"}, verdict
    assert "did not try for it for" in verdict.violations[0].message
    paced = _leading(type(build)())
    for at in range(6, 31, 6):  # the seed's pace: an attempt each lease duration
        paced.renewals("r0", at).attempt("r1")
    verdict = check(paced.mark("tick -").history(), setup)
    assert verdict.passed and verdict.judged["standby"] >= 4, verdict


def test_a_take_over_after_a_release_is_bound_by_a_jittered_retry(build: Builder,
                                                                  setup: Setup) -> None:
    def story(after: float) -> set[str]:
        b = _leading(type(build)()).renewals("r0", 2).mark("sigterm r0").lease("r0", "")
        b.mark("exited r0 0").at(2 + after).attempt("r1").lease("r1")
        return _rules(b.renewals("r1", 20).mark("tick -"), setup)

    assert story(3.0) == set()
    assert story(5.5) == {"takeover"}, "C7: retryPeriod x 2.2 + 2 s = 4.2 s after a release"


def test_a_lease_left_by_a_leader_dead_before_any_replica_ran_must_be_taken(
        build: Builder, setup: Setup) -> None:
    build.node("n1").lease("exec", "dead").mark("start r0").attempt("r0").tries("r0", 30)
    verdict = check(build.mark("tick -").history(), setup)
    assert verdict.rules() == {"takeover"}, verdict
    fair = type(build)().node("n1").lease("exec", "dead").mark("start r0").attempt("r0")
    fair.at(7).lease("r0").renewals("r0", 20).mark("tick -")
    assert check(fair.history(), setup).passed


def test_a_periodic_sweep_is_caught_and_the_chances_to_break_rules_are_counted(
        build: Builder, setup: Setup) -> None:
    _leading(build).pod("q", "n1", labels={"app": "other"}).pod("u", "n1", namespace="u")
    build.pod("p9", "n2").tries("r1", 1).node("n1", "False").delete("r0", "p0")
    build.renewals("r0", 12).pod("late", "n1").renewals("r0", 14).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.passed, verdict
    for rule in ("transition", "force", "selector", "namespace", "node", "leader", "trigger",
                 "steal"):
        assert verdict.judged.get(rule, 0) >= 1, (rule, verdict.judged)
    build.at(14.5).delete("r0", "late").renewals("r0", 16).mark("tick -")
    assert _rules(build, setup) == {"trigger"}


def test_any_replica_taking_the_dead_leaders_lease_meets_the_take_over(build: Builder,
                                                                       setup: Setup) -> None:
    build.node("n1").lease("exec", "dead").mark("start r1").mark("start r0").attempt("r1")
    build.at(3).attempt("r0").at(7).lease("r0").tries("r1", 20).mark("tick -")
    verdict = check(build.history(), setup)
    assert verdict.passed and verdict.judged["takeover"] == 1, verdict


def test_a_no_op_write_does_not_move_a_take_over_out_of_its_bound(build: Builder,
                                                                  setup: Setup) -> None:
    """On kind (seed 1260549311): a dead leader's Lease taken 6 s after the standby's first
    try, then a no-op node patch echoing an old revision pulled 20 s of reads in before the
    take-over; the model said "no standby held it within 12.4 s"."""
    def story(*, takes: bool) -> Builder:
        b = type(build)().node("n1", fenced=True).node("n2").lease("exec", "dead")
        b.mark("start r1").node("n1").at(2.6).attempt("r1").tries("r1", 8.6, every=1.0)
        if takes:
            b.at(8.67).lease("r1").mark("sigstop r1").at(12.2).mark("start r0")
            b.at(14.2).attempt("r0").tries("r0", 20.2, every=1.0).at(20.27).lease("r0")
            b.renewals("r0", 24.4).at(24.83).mark("sigcont r1").mark("exited r1 3")
        else:
            b.tries("r1", 24.8, every=1.0)
        return b.at(24.84).unchanged("n1").renewals("r0" if takes else "exec", 29).mark("tick -")

    fair = story(takes=True).recorded()
    lease = next(i for i, s in enumerate(fair.steps) if s.kind == "lease" and s.actor == "r1")
    assert all(s.order.received > fair.steps[lease].order.received
               for s in fair.steps[lease + 1:] if s.kind == "attempt"), "reads after it"
    verdict = check(fair, setup)
    assert verdict.passed and verdict.judged["takeover"] >= 1, verdict
    # a standby that never takes an expired Lease (takes-only-released) is still caught
    assert check(story(takes=False).recorded(), setup).rules() == {"takeover"}


def test_a_frozen_standby_competes_from_its_sigcont_on(build: Builder, setup: Setup) -> None:
    """A standby frozen when the leader died takes nothing while frozen (no requirement);
    thawed, it has the bound after a death from its SIGCONT (C7/C8)."""
    def ticks(b: Builder, until: float) -> Builder:
        while b.now + 1 <= until:
            b.at(b.now + 1).mark("tick -")
        return b

    def story(*, thaw_at: float | None, takes_after: float | None) -> Verdict:
        b = _leading(type(build)()).renewals("r0", 2).mark("sigstop r1")
        b.at(3).mark("sigkill r0").mark("exited r0 -9")
        if thaw_at is not None:
            ticks(b, thaw_at).mark("sigcont r1")
            if takes_after is not None:
                ticks(b, thaw_at + takes_after).attempt("r1").lease("r1")
        return check(ticks(b, 60).history(), setup)

    assert story(thaw_at=None, takes_after=None).passed, "frozen all along: nothing asked"
    assert story(thaw_at=30, takes_after=7).passed, "in time after its SIGCONT"
    assert story(thaw_at=30, takes_after=14).rules() == {"takeover"}, "12.4 s from SIGCONT"
    missed = story(thaw_at=30, takes_after=None)
    assert missed.rules() == {"takeover"}, "thawed, never took it"
    assert "counted from the SIGCONT of r1" in missed.violations[0].message, missed


def test_a_restarted_holder_asked_to_stop_before_it_wrote_the_lease_owes_no_release(
        build: Builder, setup: Setup) -> None:
    """Certify (seed 774187364): the leader SIGKILLed and started again under its identity,
    the Lease still naming it; SIGTERM came before the new process wrote the Lease (still
    starting: killed by the signal, -15). It held nothing it knew of; once it has renewed,
    a SIGTERM asks the release again."""
    _leading(build).renewals("r0", 2).mark("sigkill r0").mark("exited r0 -9")
    build.mark("start r0").mark("sigterm r0").mark("exited r0 -15")
    build.at(9).attempt("r1").lease("r1").renewals("r1", 30).mark("tick -")
    assert check(build.history(), setup).passed
    renewed = _leading(type(build)()).renewals("r0", 2).mark("sigkill r0").mark("exited r0 -9")
    renewed.mark("start r0").lease("r0").mark("sigterm r0").mark("exited r0 0")
    renewed.at(9).attempt("r1").lease("r1").renewals("r1", 30).mark("tick -")
    assert _rules(renewed, setup) == {"release"}


def test_a_sigterm_to_a_leader_already_sigkilled_asks_no_release(build: Builder,
                                                                 setup: Setup) -> None:
    """On kind (seed 3202973015): "SIGKILL leader" then "SIGTERM leader" reached the killed
    process before its exit was seen; a dead process releases nothing (the take-over after
    its death is still asked)."""
    _leading(build).renewals("r0", 2).mark("sigkill r0").mark("sigterm r0")
    build.mark("exited r0 -9").tries("r1", 30).mark("tick -")
    assert _rules(build, setup) == {"takeover"}
    fair = _leading(type(build)()).renewals("r0", 2).mark("sigkill r0").mark("sigterm r0")
    fair.mark("exited r0 -9").at(9).attempt("r1").lease("r1").renewals("r1", 30).mark("tick -")
    assert check(fair.history(), setup).passed


def test_a_transition_after_the_holder_died_asks_nothing_of_it(build: Builder,
                                                              setup: Setup) -> None:
    """Found by 20 loops of the reference (seed 2065633315): the only replica took the Lease,
    was SIGKILLed, and the node failed 1 s later while the Lease still named it; nothing was
    recorded until past the deadline. A dead process acts on nothing, so no delete is
    required of it (one started again is asked again)."""
    def only_r0(b: Builder) -> Builder:
        b.node("n1").pod("p0", "n1").mark("start r0").lease("r0")
        return b.renewals("r0", 1)

    only_r0(build).mark("sigkill r0").mark("exited r0 -9").at(2).node("n1", "False")
    build.at(14).mark("tick -")
    verdict = check(build.history(), setup)
    assert "transition" not in verdict.rules(), verdict
    alive = only_r0(type(build)()).at(2).node("n1", "False").renewals("r0", 14).mark("tick -")
    assert check(alive.history(), setup).rules() == {"transition"}, "a live holder must act"
    again = only_r0(type(build)()).mark("sigkill r0").mark("exited r0 -9").mark("start r0")
    again.lease("r0").at(2).node("n1", "False").renewals("r0", 14).mark("tick -")
    assert check(again.history(), setup).rules() == {"transition"}, "restarted: it must act"


def test_a_process_frozen_before_it_wrote_its_identitys_lease_owes_no_exit(
        build: Builder, setup: Setup) -> None:
    """Found by the 20-run loop of the reference (seed 405436819): r0 took the Lease, was
    SIGKILLed, started again under its identity and SIGSTOPped 20 ms later, before it wrote
    the Lease; r1 took it over. Resumed, the new r0 had lost nothing it knew of: it is a
    standby, and exiting is not asked of it. One frozen after it wrote the Lease must exit."""
    def restarted(b: Builder, *, wrote: bool) -> Builder:
        b.node("n1").mark("start r0").mark("start r1").lease("r0").attempt("r1")
        b.mark("sigkill r0").mark("exited r0 -9").at(5).mark("start r0")
        if wrote:
            b.lease("r0")
        b.mark("sigstop r0").at(8 if not wrote else 12).lease("r1")
        return b.renewals("r1", 14).mark("sigcont r0").renewals("r1", 40).mark("tick -")

    assert "exit-on-loss" not in _rules(restarted(build, wrote=False), setup)
    assert "exit-on-loss" in _rules(restarted(type(build)(), wrote=True), setup)


def test_a_leader_resumed_past_its_renew_deadline_owes_no_release_on_sigterm(
        build: Builder, setup: Setup) -> None:
    """Found by the 20-run loop of the reference (seed 3029642095): the only replica took
    the Lease, was frozen 4.2 s (its renew deadline 4 s), renewed late on resuming, and the
    SIGTERM 10 ms later found it exiting 3 for the leadership lost (C6), not writing the
    Lease free. A freeze within its deadline, or a SIGTERM long after it went on leading,
    still asks the release."""
    def story(frozen_s: float, *, sigterm_after_s: float = 0.01) -> set[str]:
        b = type(build)().node("n1").mark("start r0").lease("r0").renewals("r0", 2)
        b.mark("sigstop r0").at(2.01 + frozen_s).mark("sigcont r0").lease("r0")
        if sigterm_after_s > 1:
            b.renewals("r0", b.now + sigterm_after_s)
        b.mark("sigterm r0").mark("exited r0 3")
        return _rules(b.at(b.now + 12).mark("tick -"), setup)

    assert story(4.2) == set()
    assert story(2.0) == {"release"}
    assert story(4.2, sigterm_after_s=25) == {"release"}


def test_a_leader_frozen_while_it_exits_is_timed_only_while_it_runs(build: Builder,
                                                                    setup: Setup) -> None:
    """Found by the generated suite on the reference (seed 1763152513): r0 was SIGTERMed,
    wrote the Lease free, and was SIGSTOPped ("standby": not the holder any more) while its
    interpreter shut down; it exited once thawed, 10.4 s after the SIGTERM. A process cannot
    exit while frozen: its exit time runs from its SIGCONT; a SIGKILL ends it. Running past
    its deadline, before or after a freeze, still fails."""
    def story(*, release: bool = True, stop_at: float = 2.1, cont_at: float | None = 12.4,
              exit_at: float = 12.5, kill: bool = False) -> set[str]:
        b = _leading(type(build)()).renewals("r0", 2).mark("sigterm r0")
        if release:
            b.lease("r0", "").at(2.1 if stop_at > 2.1 else 2.05).attempt("r1").lease("r1")
        b.at(stop_at).mark("sigstop r0")
        if cont_at is not None:
            b.at(cont_at).mark("sigcont r0")
        if kill:
            b.mark("sigkill r0")
        b.at(exit_at).mark(f"exited r0 {-9 if kill else 0}")
        if not release:
            b.attempt("r1").lease("r1")
        return _rules(b.tries("r1", 30).mark("tick -") if not release
                      else b.renewals("r1", 30).mark("tick -"), setup)

    assert story() == set(), "thawed at 12.4 s, gone 0.1 s later"
    assert story(cont_at=None) == set(), "thawed unrecorded: its exit time is not judged"
    assert story(exit_at=23) == {"release"}, "10.6 s after its SIGCONT"
    assert story(stop_at=13, cont_at=20, exit_at=20.1) == {"release"}, "ran 11 s first"
    assert "release" not in story(release=False, stop_at=2.01, cont_at=None, kill=True,
                                  exit_at=2.5), "killed in its time before it wrote"
