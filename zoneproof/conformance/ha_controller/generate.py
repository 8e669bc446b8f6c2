"""Generated schedules (hypothesis): cluster events and replica faults, edge values drawn
deliberately.

``schedules`` is a hypothesis strategy of ``Schedule``; ``draw_batch`` draws a batch with a
seed (the same seed and budget give the same batch: the run's replay), using hypothesis's
own generation (it biases towards small and boundary values) but not its shrinker: one
schedule runs for seconds on a live bed, so ``shrink`` re-runs sub-schedules instead.

Every batch opens with one schedule of each ``FAMILIES`` template (details drawn): the
events that can expose each model rule are there every run, not left to chance (the
coverage report, ``coverage.report``, counts them); the rest of the batch is free draws.

What is drawn: one to three nodes (two may share a zone; some never reported), one or two
watched namespaces and an unwatched one, pods on them whose labels match the selector or
miss it each way it can be missed, in every phase, some already terminating; optionally a
dead leader's Lease; then events: Ready flips to False and Unknown and back, flaps shorter
and longer than the reaction bound, fences (kcm's not-ready/unreachable NoSchedule taint),
cordons and unrelated taints, nodes deleted and made again, pods bound after a transition,
phase changes, graceful deletes, a pod re-created under a deleted one's name, replicas
started, SIGTERMed, SIGKILLed, frozen and thawed (by role: the leader or a standby of that
moment), an outsider taking an expired Lease; and waits of the lengths that matter (just under and
over the renew deadline, the lease duration and the reaction bound).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from zoneproof.conformance.ha_controller.schedule import Event, NodeSpec, PodSpec, Schedule

__all__ = ["CHOSEN_STATES", "FAMILIES", "MATCHING_WAYS", "MISSES", "WAITS", "draw_batch", "families",
           "schedules"]

#: Waits that matter: instants, a watch round trip, a retry period, under and over the
#: renew deadline (4 s), the lease duration (6 s) and the reaction bound (10 s).
WAITS = (0.05, 0.3, 1.0, 2.0, 3.5, 4.5, 7.0, 11.0)
#: ``PodSpec.labels`` of pods that match the selector: the smallest labels, then other ways
#: (another value of a set, a negative requirement's key present, an empty value, an extra
#: label: ``labels.Selector.matching``).
MATCHING_WAYS = (-1, -2, -3, -4, -5)
#: Ways of missing the selector drawn (``labels.Selector.misses``; a selector with fewer
#: wraps round): every way of every ``labels.SHAPES`` selector.
MISSES = 12
_PHASES = ("Running", "Running", "Pending", "Succeeded", "Failed")


def _pods(nodes: int, watched: int, misses: int, prefix: str) -> st.SearchStrategy[PodSpec]:
    namespaces = ["w1", "w2"][:watched] + ["u"]
    return st.builds(
        PodSpec, name=st.just(prefix), node=st.integers(0, nodes - 1),
        namespace=st.sampled_from(namespaces),
        labels=st.one_of(st.just(-1), st.just(-1), st.sampled_from(MATCHING_WAYS[1:]),
                         st.integers(0, max(0, misses - 1)))
        if misses else st.one_of(st.just(-1), st.sampled_from(MATCHING_WAYS[1:])),
        phase=st.sampled_from(_PHASES), terminating=st.sampled_from((False, False, True)))


@st.composite
def schedules(draw: st.DrawFn, *, misses: int = MISSES, max_events: int = 14,
              max_seconds: float = 24.0) -> Schedule:
    """A schedule; ``misses``: how many ways the selector can be missed; at most
    ``max_events`` events and ``max_seconds`` of waits."""
    nodes = tuple(draw(st.lists(st.builds(NodeSpec, zone=st.sampled_from("ab"),
                                          reported=st.sampled_from((True, True, True, False))),
                                min_size=1, max_size=3)))
    watched = draw(st.sampled_from((1, 2)))
    count = draw(st.integers(1, 6))
    pods = tuple(replace(draw(_pods(len(nodes), watched, misses, "")), name=f"p{i}")
                 for i in range(count))
    pods = tuple(replace(p, terminating=p.terminating and p.phase in ("Running", "Pending"))
                 for p in pods)
    node = st.integers(0, len(nodes) - 1)
    names = [p.name for p in pods]
    bound = iter(range(count, count + max_events))
    flip = st.builds(lambda n, s, w: [Event("ready", node=n, status=s),
                                      *([Event("wait", seconds=w)] if w else [])],
                     node, st.sampled_from(("False", "Unknown")),
                     st.sampled_from((0.0, *WAITS)))
    # an outage during which a replacement is bound to the failed node, then its recovery:
    # the replacement may go while the transition can explain it, not for the recovery
    outage = st.builds(
        lambda n, s, w1, w2, p: [
            Event("ready", node=n, status=s), Event("wait", seconds=w1),
            Event("pod", pod=replace(p, name=f"p{next(bound, 99)}", node=n)),
            Event("wait", seconds=w2), Event("ready", node=n, status="True")],
        node, st.sampled_from(("False", "Unknown")), st.sampled_from((0.3, 1.0, 3.5)),
        st.sampled_from((7.0, 11.0, 11.0)), _pods(len(nodes), watched, misses, ""))
    # time passing: long enough, often, for Leases to be renewed (or not) and expire
    wait = st.builds(lambda w: [Event("wait", seconds=w)],
                     st.sampled_from((*WAITS, 2.0, 4.5, 7.0)))
    fragments = st.one_of(
        flip, flip, flip, outage, outage, wait, wait,
        st.builds(lambda n, s, w: [Event("ready", node=n, status=s),
                                   Event("wait", seconds=w), Event("ready", node=n,
                                                                   status="True")],
                  node, st.sampled_from(("False", "Unknown")), st.sampled_from(WAITS)),
        st.builds(lambda n: [Event("ready", node=n, status="True")], node),
        st.builds(lambda n, k, on: [Event("fence", node=n, key=k, on=on)], node,
                  st.sampled_from(("not-ready", "unreachable")), st.booleans()),
        st.builds(lambda n, kind, on: [Event(kind, node=n, on=on)], node,
                  st.sampled_from(("cordon", "taint")), st.booleans()),
        st.builds(lambda p: [Event("pod", pod=replace(p, name=f"p{next(bound, 99)}"))],
                  _pods(len(nodes), watched, misses, "")),
        st.builds(lambda p: [Event("pod", pod=replace(p, name=f"p{next(bound, 99)}"))],
                  _pods(len(nodes), watched, misses, "")),
        st.builds(lambda n, ph: [Event("phase", name=n, phase=ph)], st.sampled_from(names),
                  st.sampled_from(("Running", "Succeeded", "Failed"))),
        st.builds(lambda n: [Event("terminate", name=n)], st.sampled_from(names)),
        st.builds(lambda n, at: [Event("recreate", name=n, node=at)], st.sampled_from(names),
                  node),
        st.builds(lambda n, s: [Event("renode", node=n, status=s)], node,
                  st.sampled_from(("False", "Unknown", "", "True"))),
        # a replica stopped for a while, then thawed or restarted (or not, if the wait is 0)
        st.builds(lambda t, s, w, back: [
            Event("signal", target=t, signal=s), *([Event("wait", seconds=w)] if w else []),
            *([Event("signal", target="frozen", signal="SIGCONT") if s == "SIGSTOP"
               else Event("start", target="dead")] if back else [])],
            st.sampled_from(("leader", "leader", "standby")),
            st.sampled_from(("SIGTERM", "SIGKILL", "SIGSTOP")),
            st.sampled_from((0.0, *WAITS)), st.sampled_from((True, True, False))),
        st.just([Event("intrude")]),
    )
    events: list[Event] = []
    for fragment in draw(st.lists(fragments, min_size=min(4, max_events),
                                  max_size=max_events)):
        events += fragment
    # the replicas start at drawn points: mostly first, sometimes after events (a
    # transition while no replica runs, caught up once one leads)
    for replica in ("1", "0"):
        at = draw(st.sampled_from((0, 0, 0, min(2, len(events)), len(events) // 2)))
        events.insert(min(at, len(events)), Event("start", target=replica))
    # mostly, what follows the starts meets a sitting leader (a standby that has seen it
    # renew, after a wait); sometimes it races the election
    started = max(i for i, e in enumerate(events) if e.kind == "start") + 1
    settled = draw(st.sampled_from((None, 0.0, 2.0, 4.5)))
    if settled is not None:
        events[started:started] = [Event("leader"), *([Event("wait", seconds=settled)]
                                                      if settled else [])]
    return Schedule(nodes, pods, tuple(_capped(events[:max_events + 4], max_seconds)),
                    watched=watched, dead_leader=draw(st.sampled_from((False, False, True))))


# -- families: one template per concern, details drawn ----------------------------------

_START = [Event("start", target="1"), Event("start", target="0"), Event("leader")]
"""Both replicas, then a sitting leader (the standby has seen it renew after the wait)."""
_SETTLE = st.sampled_from((2.0, 3.5, 4.5))
_DOWN = st.sampled_from(("False", "Unknown"))


def _nodes(draw: st.DrawFn, least: int = 2) -> tuple[NodeSpec, ...]:
    """``least`` to 3 reported nodes; nodes 0 and 1 share a zone half the time."""
    count = draw(st.integers(least, 3))
    zones = ["a", draw(st.sampled_from("ab")), "b"][:count]
    return tuple(NodeSpec(zone) for zone in zones)


#: Every state a chosen pod can be in when its node fails: each phase, and a running or
#: pending pod already deleted gracefully (terminating: on a dead node that delete never
#: finishes, which is what the force delete is for).
CHOSEN_STATES = (("Running", False), ("Pending", False), ("Succeeded", False),
                 ("Failed", False), ("Running", True), ("Pending", True))


def _watched(watched: int) -> st.SearchStrategy[str]:
    """One of the ``watched`` watched namespaces."""
    return st.sampled_from(["w1", "w2"][:watched])


def _chosen(draw: st.DrawFn, name: str, node: int, watched: int) -> PodSpec:
    """A pod the controller must act on: matching, watched, in any of ``CHOSEN_STATES``."""
    phase, terminating = draw(st.sampled_from(CHOSEN_STATES))
    return PodSpec(name, node, draw(_watched(watched)), -1, phase, terminating)


@st.composite
def _scope(draw: st.DrawFn, misses: int) -> Schedule:
    """C1/C2 (transition, force, selector, namespace, node, leader): a node with a chosen
    pod in each of ``CHOSEN_STATES`` and with labels matching each of ``MATCHING_WAYS`` (a
    controller that skips any one is caught every batch, not when a free draw happens to
    hold one) and pods the controller must leave (each way of missing the selector, the
    unwatched namespace) goes NotReady under a
    sitting leader with a standby running; the chosen pods of another node (cordoned and
    tainted, maybe the same zone) stay."""
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    pods = [*(PodSpec(f"p{i}", 0, draw(_watched(watched)), -1, phase, terminating)
              for i, (phase, terminating) in enumerate(CHOSEN_STATES))]
    pods += [_chosen(draw, f"p{len(pods)}", 1, watched),
             PodSpec(f"p{len(pods) + 1}", 0, "u", -1, draw(st.sampled_from(_PHASES))),
             *(PodSpec(f"p{len(pods) + 2 + i}", 0, "w1", i, "Running") for i in range(misses))]
    pods += [PodSpec(f"p{len(pods) + i}", 0, draw(_watched(watched)), way, "Running")
             for i, way in enumerate(MATCHING_WAYS[1:])]
    aside = draw(st.permutations(("cordon", "taint")))
    events = [*_START, Event("wait", seconds=draw(_SETTLE)),
              *(Event(kind, node=1) for kind in aside),
              Event("ready", node=0, status=draw(_DOWN)),
              Event("wait", seconds=draw(st.sampled_from((7.0, 11.0))))]
    return Schedule(nodes, tuple(pods), tuple(events), watched=watched)


@st.composite
def _late(draw: st.DrawFn, misses: int) -> Schedule:
    """C3 (trigger), C1: a node goes NotReady and stays so past the reaction bound while one
    leader keeps renewing; then a chosen pod is bound to it (no trigger explains acting on
    it: no periodic sweep), its NotReady status changes both ways (False -> Unknown and
    Unknown -> False, either first: no Ready -> NotReady transition either), time passes
    (8 s or more: a controller re-listing at such a period reads a relist as no transition
    either), and the node may recover (nothing to do then)."""
    del misses
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    down = draw(_DOWN)
    events = [*_START, Event("wait", seconds=draw(_SETTLE)),
              Event("ready", node=0, status=down), Event("wait", seconds=11.0),
              Event("pod", pod=_chosen(draw, "p1", 0, watched)), Event("wait", seconds=1.0),
              Event("ready", node=0, status="Unknown" if down == "False" else "False"),
              Event("wait", seconds=1.0), Event("ready", node=0, status=down),
              Event("wait", seconds=draw(st.sampled_from((7.0, 9.0, 11.0))))]
    if draw(st.booleans()):
        events += [Event("ready", node=0, status="True"), Event("wait", seconds=2.0)]
    return Schedule(nodes, (_chosen(draw, "p0", 0, watched),), tuple(events),
                    watched=watched)


@st.composite
def _catch_up(draw: st.DrawFn, misses: int) -> Schedule:
    """C5 (new-leader), C7 (takeover of an expired Lease): a transition while no replica
    runs (the Lease maybe left by a leader that died), the replicas started after."""
    del misses
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    pods = (_chosen(draw, "p0", 0, watched), _chosen(draw, "p1", 1, watched))
    events = [Event("ready", node=0, status=draw(_DOWN)),
              Event("wait", seconds=draw(st.sampled_from((0.3, 1.0, 2.0)))),
              Event("start", target="1"), Event("start", target="0"),
              Event("wait", seconds=draw(st.sampled_from((7.0, 11.0))))]
    return Schedule(nodes, pods, tuple(events), watched=watched,
                    dead_leader=draw(st.booleans()))


@st.composite
def _handover(draw: st.DrawFn, misses: int) -> Schedule:
    """C6/C7 (release, takeover): the sitting leader is SIGTERMed (it releases) while a
    standby competes, a transition the new leader must act on; the old one restarted as a
    standby, the new leader SIGKILLed (it dies): the standby takes over once it expired."""
    del misses
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    events = [*_START, Event("wait", seconds=draw(_SETTLE)),
              Event("signal", target="leader", signal="SIGTERM"),
              Event("wait", seconds=draw(st.sampled_from((1.0, 2.0, 3.5)))),
              Event("ready", node=0, status=draw(_DOWN)), Event("wait", seconds=2.0),
              Event("start", target="dead"), Event("wait", seconds=draw(_SETTLE)),
              Event("signal", target="leader", signal="SIGKILL"), Event("wait", seconds=11.0)]
    return Schedule(nodes, (_chosen(draw, "p0", 0, watched),), tuple(events),
                    watched=watched)


@st.composite
def _freeze(draw: st.DrawFn, misses: int) -> Schedule:
    """C6 (exit-on-loss, leader), C7 (takeover): the sitting leader is frozen past the
    take-over bound after a death (12.4 s), a transition meanwhile, the standby takes
    over; the old leader thawed must exit non-zero and act no more."""
    del misses
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    events = [*_START, Event("wait", seconds=draw(_SETTLE)),
              Event("signal", target="leader", signal="SIGSTOP"),
              Event("wait", seconds=draw(st.sampled_from((1.0, 2.0)))),
              Event("ready", node=0, status=draw(_DOWN)), Event("wait", seconds=12.0),
              Event("signal", target="frozen", signal="SIGCONT"), Event("wait", seconds=2.0)]
    return Schedule(nodes, (_chosen(draw, "p0", 0, watched),
                            _chosen(draw, "p1", 0, watched)), tuple(events), watched=watched)


@st.composite
def _standby(draw: st.DrawFn, misses: int) -> Schedule:
    """C8 (standby), C6 (steal): a standby beside a healthy leader for longer than its
    longest allowed gap between attempts, transitions meanwhile; then the standby is asked
    to stop (only the holder releases: the Lease stays the leader's)."""
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    pods = (_chosen(draw, "p0", 0, watched), _chosen(draw, "p1", 1, watched),
            PodSpec("p2", 1, "w1", draw(st.integers(0, max(0, misses - 1))), "Running"))
    events = [*_START, Event("wait", seconds=draw(_SETTLE)), Event("wait", seconds=7.0),
              Event("ready", node=0, status=draw(_DOWN)), Event("wait", seconds=4.5),
              Event("ready", node=1, status=draw(_DOWN)), Event("wait", seconds=7.0),
              Event("signal", target="standby", signal="SIGTERM"), Event("wait", seconds=2.0)]
    return Schedule(nodes, pods, tuple(events), watched=watched)


@st.composite
def _again(draw: st.DrawFn, misses: int) -> Schedule:
    """C1 (transition): every Ready -> NotReady transition counts, not only a node's first:
    a node fails, recovers, gets a new chosen pod, and fails again."""
    del misses
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    events = [*_START, Event("wait", seconds=2.0),
              Event("ready", node=0, status=draw(_DOWN)), Event("wait", seconds=5.0),
              Event("ready", node=0, status="True"),
              Event("wait", seconds=draw(st.sampled_from((1.0, 2.0)))),
              Event("pod", pod=_chosen(draw, "p1", 0, watched)), Event("wait", seconds=2.0),
              Event("ready", node=0, status=draw(_DOWN)), Event("wait", seconds=11.0)]
    return Schedule(nodes, (_chosen(draw, "p0", 0, watched),), tuple(events),
                    watched=watched)


@st.composite
def _renode(draw: st.DrawFn, misses: int) -> Schedule:
    """C3 (trigger), C1: a node with a chosen pod is deleted and made again under its name,
    not Ready or never reported, the pod still bound to it: no Ready -> NotReady transition
    (001: an update whose old state is Ready; the new node has none), so the pod stays
    (past the bound of the leader's acquisition, which may explain acting on any NotReady
    node); once the new node was Ready and fails, that transition counts."""
    del misses
    nodes, watched = _nodes(draw), draw(st.sampled_from((1, 2)))
    events = [*_START, Event("wait", seconds=11.0),  # past the bound of the acquisition
              Event("renode", node=0, status=draw(st.sampled_from(("False", "Unknown", "")))),
              Event("wait", seconds=draw(st.sampled_from((2.0, 3.5)))),
              Event("ready", node=0, status="True"), Event("wait", seconds=1.0),
              Event("ready", node=0, status=draw(_DOWN)), Event("wait", seconds=4.5)]
    return Schedule(nodes, (_chosen(draw, "p0", 0, watched),), tuple(events),
                    watched=watched)


FAMILIES = {"scope": _scope, "late": _late, "catch-up": _catch_up, "handover": _handover,
            "freeze": _freeze, "standby": _standby, "again": _again, "renode": _renode}
"""One template per concern, in the order a batch runs them."""


#: Hypothesis opens with its simplest example: the head is its last of a few draws, so
#: another seed gives other details.
_HEAD_DRAWS = 6


def families(misses: int = MISSES) -> st.SearchStrategy[tuple[Schedule, ...]]:
    """One schedule of each family (a batch's head)."""
    return st.tuples(*(family(misses) for family in FAMILIES.values()))


def _capped(events: list[Event], max_seconds: float) -> list[Event]:
    """``events`` with waits cut so that they add up to at most ``max_seconds``."""
    left, kept = max_seconds, []
    for event in events:
        if event.kind == "wait":
            if left <= 0:
                continue
            cut = replace(event, seconds=min(event.seconds, left))
            left -= cut.seconds
            kept.append(cut)
            continue
        kept.append(event)
    return kept


def draw_batch(count: int, run_seed: int, *, misses: int = MISSES, max_events: int = 14,
               max_seconds: float = 24.0) -> list[Schedule]:
    """``count`` schedules drawn by hypothesis from ``run_seed`` (deterministic: the same
    seed and arguments give the same batch). Hypothesis explores around what it drew, so
    its examples come in near-twins; a schedule whose events repeat an earlier one's is
    dropped (three times the examples are drawn to make up for them). The batch opens with
    one schedule of each family (``FAMILIES``), if ``count`` leaves room for them."""
    head: list[Schedule] = []

    @seed(run_seed)
    @settings(max_examples=_HEAD_DRAWS, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(families(misses))
    def heads(drawn: tuple[Schedule, ...]) -> None:
        head[:] = [replace(s, events=tuple(_capped(list(s.events), max_seconds)),
                           notes={"family": name}) for name, s in zip(FAMILIES, drawn,
                                                                      strict=True)]

    if count > len(FAMILIES):
        heads()
    found: list[Schedule] = list(head)
    seen: set[tuple[str, ...]] = {tuple(e.describe() for e in s.events) for s in head}
    strategy = schedules(misses=misses, max_events=max_events, max_seconds=max_seconds)

    @seed(run_seed)
    @settings(max_examples=max(1, 3 * (count - len(found))), phases=[Phase.generate], database=None,
              deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def collect(schedule: Schedule) -> None:
        events = tuple(e.describe() for e in schedule.events)
        if len(found) < count and events not in seen:
            seen.add(events)
            found.append(schedule)

    if len(found) < count:
        collect()
    return [replace(s, notes={**s.notes, "seed": run_seed, "index": i})
            for i, s in enumerate(found)]
