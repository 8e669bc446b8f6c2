"""The executable specification of the HA controller: which deletions a recorded history
requires (and by when), which it forbids, and what the Lease demands of the replicas.

Pure: a ``History`` (the API server's record of one schedule) and a ``Setup`` (what the
controller was told, the suite's bounds) in, a ``Verdict`` out. Every rule cites the seed
sentence it rests on (``RULES``; seeds 001, the NooBaa HA controller, and 002, the
Kubernetes HA proposal); what the seeds leave open is allowed, so a correct controller that
differs from the reference is never failed. In particular allowed, neither required nor
forbidden: deleting pods bound to a failed node after its transition (within the reaction
bound of it), acting again when kcm's fence lands (C4), acting on the pods of a node that
never reported when taking the Lease over, deleting terminal pods, any exit code on
SIGTERM, deleting without a UID precondition (it is judged by what it deleted).

Order is the API server's: steps are sorted by the revision each wrote; a time bound
compares the API server's own stamps, each in the direction that favours the controller
(a required delete is late only if it was *received* after the deadline measured from
when the trigger *completed*; a delete is explained by a trigger if it *could* fall
within the bound). The ``reaction_s`` bound is both the deadline of a required delete and
how long after a trigger a controller may still be looking at the node's pods.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from zoneproof.components.harness import controller as bounds
from zoneproof.conformance.ha_controller import labels
from zoneproof.conformance.ha_controller.history import History, NodeView, PodView, Step

__all__ = ["RULES", "Rule", "Setup", "Verdict", "Violation", "check"]

_001 = "seed 001 (NooBaa HA controller)"
_002 = "seed 002 (Kubernetes HA proposal)"


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the model: ``required`` (must happen, by a deadline) or forbidden."""

    id: str
    row: str
    required: bool
    says: str
    seed: str

    def cite(self) -> str:
        """The rule, its contract row and its seed sentence, for a failure message."""
        kind = "required" if self.required else "forbidden"
        return f"{self.id} ({self.row}, {kind}): {self.says} — {self.seed}"


RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("transition", "C1/C2/C7", True,
         "when a node's Ready condition goes True -> False/Unknown, the Lease holder "
         "force-deletes every pod bound to it that matches the selector in a watched "
         "namespace (whatever its phase), within the reaction bound",
         f'{_001}: "When a node transitions from `Ready` to `NotReady` status, the HA '
         'Controller looks for NooBaa pods on that node, these pods will be force deleted." '
         '"All the pods matching the above are force-deleted"'),
    Rule("new-leader", "C5", True,
         "a replica that takes the Lease acts on the pods a Ready -> NotReady transition "
         "concerned that are still on the node, still NotReady (no holder acted on them)",
         f'{_002}: "When a failure occurs, the standby component that becomes the master '
         'must determine the current state of the system before resuming functionality." '
         '"The component that succeeds becomes the master, and should perform all functions '
         'of that component."'),
    Rule("release", "C6", True,
         "a leader asked to shut down (SIGTERM) writes the Lease free and exits",
         f'{_002}: "A clean shutdown of the leader will cause a release of the lease and a '
         'new master will be elected."'),
    Rule("exit-on-loss", "C6", True,
         "a leader that lost the Lease (frozen past its term, another took it) exits "
         "non-zero once it runs again",
         f'{_002}: "If there is a failure to renew the lease, this process should force the '
         'entire component to exit." "The component should exit with an exit code '
         'indicating that the component is not the master."'),
    Rule("takeover", "C7/C8", True,
         "after the leader released the Lease or died, a standby that was competing holds "
         "it within the bound (at the seed's pace: an attempt each lease duration)",
         f'{_002}: "The components that fail to become the master should not perform any '
         'tasks and sleep for their lease duration and then attempt to become the master '
         'again." "A clean shutdown of the leader will cause a release of the lease and a '
         'new master will be elected."'),
    Rule("standby", "C8", True,
         "a replica that does not hold the Lease keeps trying for it (reads or writes it) "
         "at the seed's pace or faster, also once it has seen a healthy leader renew it, "
         "and does not exit unasked",
         f'{_002}: "The components that fail to become the master should not perform any '
         'tasks and sleep for their lease duration and then attempt to become the master '
         'again." "On startup, all components should attempt to become master."'),
    Rule("force", "C2", False, "a delete without grace period 0",
         f'{_001}: "these pods will be force deleted"'),
    Rule("namespace", "C2", False, "deleting a pod outside the watched namespaces",
         f'{_001}: "Pod runs in the watched namespace"'),
    Rule("selector", "C2", False, "deleting a pod that does not match the selector",
         f'{_001}: "Pod is labeled with `app=noobaa`"'),
    Rule("node", "C2", False,
         "deleting a pod that was never bound to a not-Ready node (a Ready node, cordoned, "
         "tainted or of the failed node's zone, is not the failed node)",
         f'{_001}: "Pod runs on the failed node"'),
    Rule("trigger", "C3", False,
         "deleting with no trigger within the reaction bound before it: no Ready -> NotReady "
         "transition (or fence) of the pod's node and no own Lease acquisition; so nothing "
         "for a node's recovery and no periodic sweep",
         f'{_001}: "Update event where old Node state is `Ready` and current state is '
         '`NotReady` indicates a node goes down event. All other events are filtered out."'),
    Rule("leader", "C6", False,
         "acting while not holding the Lease: before taking it, after losing or releasing "
         "it, or after it expired unrenewed",
         f'{_002}: "The components that fail to become the master should not perform any '
         'tasks" "Upon losing master status, such components should exit instantly"'),
    Rule("steal", "C6", False,
         "taking the Lease from a holder, or clearing it (only the holder releases), before "
         "its lease duration passed unrenewed",
         f'{_002}: "All other components of that type will fail until the current leader '
         'releases the lease, or fails to renew the lease within the expiration time."'),
)}

#: Seconds a replica may take from its start to its first try for the Lease, beyond the
#: standby's gap (a process starting on a loaded machine: 14 s seen on 2 busy cores).
STARTUP_S = 15.0
#: Seconds by which a leader's freeze (from its last Lease write to its SIGCONT, as the record
#: times them) may fall short of its renew deadline and still count as outlasting it: the
#: process times its deadline from when it sent the write, and the signal lands around its
#: marker.
DEADLINE_SLACK_S = 0.25
#: Seconds from SIGCONT to the exit of a leader that lost its Lease while frozen: its renew
#: deadline plus the suite's generous margin (the conformance suite's LEADER_TIMEOUT_S).
EXIT_MARGIN_S = 15.0


@dataclass(frozen=True, slots=True)
class Setup:
    """What the controller was told and the suite's bounds."""

    namespaces: tuple[str, ...]
    selector: str
    replicas: tuple[str, ...]
    lease_duration_s: float = 6.0
    renew_deadline_s: float = 4.0
    retry_period_s: float = 1.0
    reaction_s: float = 10.0
    """Trigger -> pods gone (C7), and how long after a trigger a controller may act on it."""
    exit_s: float = 10.0
    """SIGTERM -> exit of a leader."""

    @property
    def retry_s(self) -> float:
        """The longest wait between two attempts of a client-go elector (jitter included)."""
        return bounds.max_retry_wait_s(self.retry_period_s)

    @property
    def pace_s(self) -> float:
        """The longest wait between a standby's attempts the seeds allow: its lease
        duration (002), or client-go's jittered retry period if that is longer."""
        return max(self.lease_duration_s, self.retry_s)

    @property
    def standby_gap_s(self) -> float:
        """The longest a standby may go without trying for the Lease (C8, the hand suite's
        ``ControllerSettings.standby_retry``). From its start to its first try,
        ``STARTUP_S`` more."""
        return bounds.standby_gap_s(self.lease_duration_s, self.retry_period_s)

    @property
    def takeover_after_death_s(self) -> float:
        """C7 (``ControllerSettings.takeover_after_kill``)."""
        return bounds.takeover_after_kill_s(self.lease_duration_s, self.retry_period_s)

    @property
    def takeover_after_release_s(self) -> float:
        """C7 (``ControllerSettings.takeover_after_release``)."""
        return bounds.takeover_after_release_s(self.retry_period_s)

    @property
    def exit_after_loss_s(self) -> float:
        """SIGCONT of a leader whose Lease was taken -> its exit."""
        return self.renew_deadline_s + EXIT_MARGIN_S


@dataclass(frozen=True, slots=True)
class Violation:
    """A rule broken at step ``index`` of the history."""

    rule: Rule
    index: int
    message: str

    def describe(self) -> str:
        """The message, then the rule with its seed sentence."""
        return f"{self.message}\n  rule {self.rule.cite()}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The model's judgement of one history."""

    violations: tuple[Violation, ...]
    undecided: tuple[str, ...]
    """What the record could not decide (a NO_DATA, never a pass)."""
    required: int
    """How many required deletions and Lease events the history asked for (all met unless
    a violation says otherwise)."""
    notes: tuple[str, ...] = ()
    judged: dict[str, int] = field(default_factory=dict)
    """Per rule id, how many times the record let the checker decide it (a required event
    met or missed, a delete judged, or a chance to break a forbidden rule that was not
    taken): a rule with none was not exercised by this history."""

    @property
    def passed(self) -> bool:
        """No violation and nothing undecided."""
        return not self.violations and not self.undecided

    @property
    def first(self) -> Violation | None:
        """The violation established earliest in the API server's order."""
        return min(self.violations, key=lambda v: v.index, default=None)

    def rules(self) -> set[str]:
        """The ids of the rules broken."""
        return {v.rule.id for v in self.violations}


# -- the world as the steps left it ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Lease:
    holder: str = ""
    last_write: int = -1
    """Index of the last successful write (-1: none)."""
    duration_s: float | None = None


@dataclass
class _World:
    """State after each step: nodes, pods (by uid, existing only), the Lease, processes."""

    steps: list[Step]
    nodes: list[dict[str, NodeView]] = field(default_factory=list)
    pods: list[dict[str, PodView]] = field(default_factory=list)
    lease: list[_Lease] = field(default_factory=list)
    acquisitions: list[tuple[int, str]] = field(default_factory=list)
    """(index, identity) of each acquisition: the holder changed to it, or its process
    wrote itself holder for the first time since it (re)started."""
    markers: list[tuple[int, str, str, int | None]] = field(default_factory=list)
    """(index, event, identity, code) of each marker."""

    @classmethod
    def build(cls, steps: list[Step]) -> _World:
        world = cls(steps)
        nodes: dict[str, NodeView] = {}
        pods: dict[str, PodView] = {}
        lease = _Lease()
        fresh: set[str] = set()
        for index, step in enumerate(steps):
            if step.kind == "node" and step.node is not None:
                nodes = {**nodes, step.node.name: step.node}
            elif step.kind in ("pod", "delete") and step.pod is not None and step.succeeded:
                pods = dict(pods)
                if step.pod.exists:
                    pods[step.pod.uid] = step.pod
                else:
                    pods.pop(step.pod.uid, None)
            elif step.kind == "lease" and step.succeeded:
                holder = step.actor if step.holder is None else step.holder
                if holder and (holder != lease.holder or holder in fresh):
                    world.acquisitions.append((index, holder))
                    fresh.discard(holder)
                lease = _Lease(holder, index, step.duration_s)
            elif step.kind == "marker":
                event, who, code = step.marker_event
                world.markers.append((index, event, who, code))
                if event == "start":
                    fresh.add(who)
            world.nodes.append(nodes)
            world.pods.append(pods)
            world.lease.append(lease)
        return world

    def time(self, index: int) -> tuple[dt.datetime, dt.datetime]:
        """(received, completed) of step ``index``."""
        order = self.steps[index].order
        return order.received, order.completed

    def within(self, start: int, end: int, seconds: float) -> bool:
        """Whether step ``end`` could have taken effect within ``seconds`` of step
        ``start`` (received(end) <= completed(start) + seconds: in the controller's favour)."""
        return self.time(end)[0] <= self.time(start)[1] + dt.timedelta(seconds=seconds)

    def deadline_passed(self, start: int, seconds: float) -> bool:
        """Whether the history runs past ``seconds`` after step ``start``."""
        return self.time(len(self.steps) - 1)[0] > self.time(start)[1] + \
            dt.timedelta(seconds=seconds)

    def able(self, who: str, index: int) -> bool:
        """Whether ``who`` could act under the Lease after step ``index``: its holder of
        record, its last write's lease duration not yet run out (in its favour)."""
        lease = self.lease[index]
        if lease.holder != who or lease.last_write < 0:
            return False
        if lease.duration_s is None:
            return True
        return self.time(index)[0] <= self.time(lease.last_write)[1] + \
            dt.timedelta(seconds=lease.duration_s)

    def dead(self, who: str, index: int) -> bool:
        """``who``'s process was SIGKILLed or had exited before step ``index`` and was not
        started again since: it acts on nothing then, whatever the Lease still says."""
        state = False
        for i, event, w, _ in self.markers:
            if i < index and w == who:
                state = event in ("sigkill", "exited") or (state and event != "start")
        return state

    def marker_between(self, who: str, events: Iterable[str], start: int, end: int) -> bool:
        """A marker of ``who`` with one of ``events`` after step ``start``, before ``end``."""
        wanted = set(events)
        return any(start < i < end and w == who and e in wanted for i, e, w, _ in self.markers)

    def window(self, start: int, seconds: float) -> range:
        """Indices of the steps that could fall within ``seconds`` after step ``start``."""
        end = start + 1
        while end < len(self.steps) and self.within(start, end, seconds):
            end += 1
        return range(start + 1, end)

    def signalled(self, who: str, start: int, seconds: float) -> bool:
        """``who`` was stopped, killed, asked to stop or exited, possibly within ``seconds``
        after step ``start``."""
        return any(self.steps[i].kind == "marker" and self.steps[i].marker_event[1] == who
                   and self.steps[i].marker_event[0] in ("sigstop", "sigkill", "sigterm",
                                                         "exited")
                   for i in self.window(start, seconds))

    def disturbed(self, who: str, start: int, seconds: float) -> bool:
        """The holder ``who`` was signalled, or lost its ability to act (another took or
        freed the Lease, or it went unrenewed past its duration), possibly within
        ``seconds`` after step ``start``: a leader's duty then lapses, it is not required."""
        return self.signalled(who, start, seconds) or any(
            not self.able(who, i) for i in self.window(start, seconds))

    def node_at(self, index: int, name: str) -> NodeView | None:
        return self.nodes[index].get(name) if index >= 0 else None

    def removal(self, uid: str, after: int) -> int | None:
        """Index of the step that removed pod ``uid`` after step ``after``."""
        for index in range(after + 1, len(self.steps)):
            step = self.steps[index]
            if step.kind == "delete" and step.succeeded and step.pod is not None \
                    and step.pod.uid == uid and not step.pod.exists:
                return index
        return None

    def created(self, uid: str) -> int | None:
        """Index of the first step at which pod ``uid`` existed."""
        return next((i for i, pods in enumerate(self.pods) if uid in pods), None)


def _fence_landed(before: NodeView, now: NodeView) -> bool:
    """kcm's fence put on a node that had none (not a node made anew: the API server's
    admission taints every new Node not-ready)."""
    return before.exists and now.fenced and not before.fenced


# -- the checker ---------------------------------------------------------------------


@dataclass
class _Judge:
    world: _World
    setup: Setup
    selector: labels.Selector
    violations: list[Violation] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    required: int = 0
    judged: Counter[str] = field(default_factory=Counter)

    def fail(self, rule: str, index: int, message: str) -> None:
        self.judged[rule] += 1
        self.violations.append(Violation(RULES[rule], index, message))

    def describe(self, index: int) -> str:
        step = self.world.steps[index]
        received = step.order.received.strftime("%H:%M:%S.%f")[:-3]
        what = {"marker": step.marker, "lease": f"Lease holder -> {step.holder!r}",
                "delete": f"DELETE {step.target} ({step.code})"}.get(step.kind, "")
        if step.kind == "node" and step.node is not None:
            n = step.node
            what = (f"node {n.name} Ready={n.ready or '<none>'}"
                    f"{' fenced' if n.fenced else ''}{' cordoned' if n.unschedulable else ''}"
                    if n.exists else f"node {n.name} deleted")
        if step.kind == "pod" and step.pod is not None:
            p = step.pod
            what = (f"pod {p.key} on {p.node or '<unbound>'} {p.phase}"
                    f"{' terminating' if p.terminating else ''}")
        return f"#{index} {received} {step.actor}: {what}"

    def chosen(self, pod: PodView) -> bool:
        """Whether the seed's filter picks ``pod`` (namespace and labels)."""
        return pod.namespace in self.setup.namespaces and self.selector.matches(pod.label_map)

    # -- forbidden ---------------------------------------------------------------------

    def deletes(self) -> None:
        for index, step in enumerate(self.world.steps):
            if step.kind == "delete" and step.actor in self.setup.replicas:
                self.delete(index, step)

    def delete(self, index: int, step: Step) -> None:
        who, where = step.actor, self.describe(index)
        if not step.grace_known:
            if step.succeeded:  # a refused delete removed nothing: its grace does not matter
                self.undecided.append(f"{where}: the record does not say the grace period asked")
        elif step.grace == 0:
            self.judged["force"] += 1
        else:
            asked = "none (the pod's own)" if step.grace is None else f"{step.grace}s"
            self.fail("force", index, f"{where}: grace period asked {asked}, not 0")
        namespace = step.target.split("/", 1)[0]
        if namespace not in self.setup.namespaces:
            self.fail("namespace", index, f"{where}: {namespace!r} is not among the watched "
                      f"namespaces {list(self.setup.namespaces)}")
            return
        self.judged["namespace"] += 1
        pod = step.pod
        if pod is None or not step.succeeded:
            self.failed_delete(index, step)
            return
        if not self.selector.matches(pod.label_map):
            self.fail("selector", index, f"{where}: the pod's labels {pod.label_map} do not "
                      f"match {self.setup.selector!r}")
            return
        self.judged["selector"] += 1
        created = self.world.created(pod.uid)
        if created is None:
            self.undecided.append(f"{where}: the pod {pod.key} ({pod.uid}) is not in the "
                                  "record (created before it)")
            return
        failed = [q for q in range(created, index)
                  if (n := self.world.node_at(q, pod.node)) is not None and n.not_ready
                  and pod.uid in self.world.pods[q]]
        if not failed:
            self.fail("node", index, f"{where}: {pod.key} was bound to {pod.node or '<none>'}"
                      f" from {self.describe(created)}, Ready all that time")
            return
        self.judged["node"] += 1
        self.explained(index, step, pod, created, who)

    def triggers(self, node: str, who: str, before: int) -> list[tuple[int, str]]:
        """(index, what) of every trigger for ``who`` to act on ``node`` before ``before``."""
        found: list[tuple[int, str]] = []
        for index in range(before):
            now, then = self.world.node_at(index, node), self.world.node_at(index - 1, node)
            if now is None or not now.not_ready:
                continue
            if then is not None and then.ready == "True" and self.world.steps[index].kind \
                    == "node":
                found.append((index, "transition"))
            elif then is not None and _fence_landed(then, now):
                found.append((index, "fence"))
        found += [(i, "acquisition") for i, holder in self.world.acquisitions
                  if holder == who and i < before]
        return sorted(found)

    def explained(self, index: int, step: Step, pod: PodView, created: int, who: str) -> None:
        """Forbidden unless some trigger within the bound before the delete, a moment after
        it when the pod was on the not-Ready node, and ``who`` able to act then, explain
        it (a replica frozen in between may deliver a decision made before: the seed's
        "short window after a new master acquires the lease")."""
        world, bound = self.world, self.setup.reaction_s
        leaderless = []
        for start, what in self.triggers(pod.node, who, index):
            if not (world.within(start, index, bound)
                    or world.marker_between(who, ("sigstop",), start, index)):
                continue
            moments = [q for q in range(max(start, created), index)
                       if world.within(start, q, bound)
                       and (n := world.node_at(q, pod.node)) is not None and n.not_ready
                       and pod.uid in world.pods[q]]
            if any(world.able(who, q) for q in moments):
                self.judged["trigger"] += 1
                self.judged["leader"] += 1
                return
            if moments:
                leaderless.append(f"{what} {self.describe(start)}")
        where = self.describe(index)
        if leaderless:
            self.fail("leader", index, f"{where}: {who} did not hold the Lease at any moment "
                      f"it could have decided on {pod.key} (after {leaderless[-1]}; holder "
                      f"of record then {world.lease[index - 1].holder or '<nobody>'!r})")
            return
        self.fail("trigger", index, f"{where}: no transition or fence of {pod.node} and no "
                  f"Lease acquisition by {who} within {bound:g}s before it that {pod.key} "
                  f"(bound to {pod.node} at {self.describe(created)}) could be acted on for")

    def failed_delete(self, index: int, step: Step) -> None:
        """A delete that removed nothing is judged only on the Lease: ``who`` able to act
        at some moment within the bound before it (or frozen since)."""
        world, who = self.world, step.actor
        for q in range(index - 1, -1, -1):
            if not world.steps[q].order.before(step.order):
                continue
            if world.able(who, q):  # able until step q + 1 at least
                if q + 1 >= index or world.within(q + 1, index, self.setup.reaction_s) \
                        or world.marker_between(who, ("sigstop",), q, index):
                    self.judged["leader"] += 1
                    return
                break
        self.fail("leader", index, f"{self.describe(index)}: {who} tried to delete without "
                  f"holding the Lease within {self.setup.reaction_s:g}s before")

    def steals(self) -> None:
        world = self.world
        for index, step in enumerate(world.steps):
            if step.kind != "lease" or step.actor not in self.setup.replicas or index == 0:
                continue
            before, after = world.lease[index - 1], world.lease[index]
            # taking it, or clearing it (only its holder releases it), from another holder
            if before.holder in ("", step.actor) or before.last_write < 0 \
                    or after.holder == before.holder:
                continue
            self.judged["steal"] += 1
            duration = before.duration_s or self.setup.lease_duration_s
            written = world.steps[before.last_write]
            last = min(written.order.received, written.renewed_at or written.order.received)
            if step.order.received <= last + dt.timedelta(seconds=duration):
                waited = (step.order.received - last).total_seconds()
                took = "took the Lease from" if after.holder == step.actor else \
                    f"wrote holder {after.holder!r} over"
                self.fail("steal", index, f"{self.describe(index)}: {took} "
                          f"{before.holder!r} {waited:.2f}s after its last write "
                          f"({self.describe(before.last_write)}), within its lease duration "
                          f"{duration:g}s")

    # -- required ----------------------------------------------------------------------

    def due(self, uid: str, start: int, key: str, rule: str, why: str, *,
            excused: bool = False) -> None:
        """Pod ``uid`` must be removed within the reaction bound after step ``start``;
        ``excused``: the one who had to act was disturbed meanwhile (met still counts)."""
        world, bound = self.world, self.setup.reaction_s
        removed = world.removal(uid, start)
        if removed is not None and world.within(start, removed, bound):
            self.required += 1
            self.judged[rule] += 1
            return
        if excused:
            self.notes.append(f"{key}: not required by {why} (the one to act was disturbed)")
            return
        self.required += 1
        if removed is not None:
            late = (world.time(removed)[0] - world.time(start)[1]).total_seconds()
            self.fail(rule, start, f"{key} removed {late:.2f}s after {why} (bound "
                      f"{bound:g}s), by {self.describe(removed)}")
            return
        if not world.deadline_passed(start, bound):
            self.undecided.append(f"{key}: the record ends before the deadline of {why}")
            return
        state = next((p for p in world.pods[-1].values() if p.uid == uid), None)
        now = "terminating (a delete without grace 0?)" if state and state.terminating \
            else "still there"
        self.fail(rule, start, f"{key} {now} at the end of the record, not removed within "
                  f"{bound:g}s of {why}")

    def transitions(self) -> None:
        world, bound = self.world, self.setup.reaction_s
        for index, step in enumerate(world.steps):
            if step.kind != "node" or step.node is None or not step.node.not_ready:
                continue
            before = world.node_at(index - 1, step.node.name)
            if before is None or before.ready != "True":
                continue
            holder = world.lease[index].holder
            why = f"the transition {self.describe(index)}"
            if holder not in self.setup.replicas or not world.able(holder, index) \
                    or world.dead(holder, index):
                self.notes.append(f"{why}: no replica able to act held the Lease")
                continue
            if self.recovers(step.node.name, index, bound):
                continue
            excused = world.disturbed(holder, index, bound)
            for uid, pod in sorted(world.pods[index].items(), key=lambda kv: kv[1].key):
                if pod.node == step.node.name and self.chosen(pod):
                    self.due(uid, index, pod.key, "transition", why, excused=excused)

    def recovers(self, node: str, start: int, seconds: float) -> bool:
        """Whether ``node`` could be Ready again (or gone) within ``seconds`` of ``start``."""
        for index in range(start + 1, len(self.world.steps)):
            if not self.world.within(start, index, seconds):
                return False
            view = self.world.node_at(index, node)
            if view is None or not view.not_ready:
                return True
        return False

    def new_leaders(self) -> None:
        world, bound = self.world, self.setup.reaction_s
        for index, who in world.acquisitions:
            if who not in self.setup.replicas:
                continue
            excused = world.disturbed(who, index, bound)
            why = f"taking the Lease {self.describe(index)}"
            for name, node in sorted(world.nodes[index].items()):
                if not node.not_ready or self.recovers(name, index, bound):
                    continue
                spell = self.spell(name, index)
                if spell is None:
                    continue
                for uid, pod in sorted(world.pods[spell].items(), key=lambda kv: kv[1].key):
                    if pod.node == name and self.chosen(pod) and uid in world.pods[index]:
                        self.due(uid, index, pod.key, "new-leader",
                                 f"{why} ({name} NotReady since {self.describe(spell)})",
                                 excused=excused)

    def spell(self, node: str, index: int) -> int | None:
        """Index of the Ready -> NotReady transition that began ``node``'s NotReady spell
        at ``index`` (None: it never was Ready since)."""
        for q in range(index, 0, -1):
            now, then = self.world.node_at(q, node), self.world.node_at(q - 1, node)
            if now is None or not now.not_ready:
                return None
            if then is not None and then.ready == "True":
                return q
        return None

    def signals(self) -> None:
        world = self.world
        for index, event, who, _ in world.markers:
            if who not in self.setup.replicas:
                continue
            if event == "sigterm" and world.able(who, index) \
                    and not self.frozen(who, index) and not world.marker_between(
                        who, ("sigkill",), self.started(who, index), index) \
                    and self.wrote_lease(who, index) and not self.overran(who, index):
                # (a process already SIGKILLed releases nothing; nor does one restarted under
                # the holder's identity that has not written the Lease yet: it holds nothing
                # it knows of, and may not even have its signal handler yet; nor one just
                # resumed past its renew deadline: it lost the leadership, C6 has it exit)
                self.release(index, who)
            elif event == "sigstop" and world.lease[index].holder == who \
                    and self.wrote_lease(who, index):
                # (one restarted under the holder's identity and frozen before it wrote the
                # Lease holds nothing it knows of: it is a standby when it runs again)
                self.lost(index, who)

    def frozen(self, who: str, index: int) -> bool:
        state = False
        for i, event, w, _ in self.world.markers:
            if i < index and w == who:
                state = event == "sigstop" or (state and event not in ("sigcont", "start"))
        return state

    def overran(self, who: str, index: int) -> bool:
        """``who``'s current process was frozen, after it last wrote the Lease, until its
        renew deadline may have passed by its own clock (``DEADLINE_SLACK_S`` in its favour),
        and resumed within ``exit_after_loss_s`` before step ``index``: it may count the
        leadership lost (C6: it exits at once, writing nothing), whatever it wrote since."""
        world, setup = self.world, self.setup
        start = self.started(who, index)
        stop = None
        for i, event, w, _ in world.markers:
            if w != who or not start < i < index:
                continue
            if event == "sigstop":
                stop = i
            elif event == "sigcont" and stop is not None:
                last = self.last_write(who, stop)
                since_write_s = (world.time(i)[1] - world.time(last)[0]).total_seconds() \
                    if last is not None else 0.0
                if since_write_s >= setup.renew_deadline_s - DEADLINE_SLACK_S \
                        and world.within(i, index, setup.exit_after_loss_s):
                    return True
                stop = None
        return False

    def exit_after(self, who: str, index: int) -> tuple[int, int | None] | None:
        """(index, code) of ``who``'s next exit after step ``index``."""
        return next(((i, c) for i, e, w, c in self.world.markers
                     if i > index and w == who and e == "exited"), None)

    def release(self, index: int, who: str) -> None:
        world, where, bound = self.world, self.describe(index), self.setup.exit_s
        exited = self.exit_after(who, index)
        end = exited[0] if exited is not None else len(world.steps)
        released = [i for i in range(index + 1, end)
                    if world.steps[i].kind == "lease" and world.steps[i].actor == who
                    and world.lease[i].holder != who]
        clock, cut = self.exit_clock(who, index, end)
        since = "" if clock == index else f" (counted from {self.describe(clock)})"
        last = cut if cut is not None else end if exited is not None else None
        if last is None:
            self.required += 1
            if world.deadline_passed(clock, bound):
                self.fail("release", index, f"{where}: {who} still running {bound:g}s after "
                          f"SIGTERM{since}")
            else:
                self.undecided.append(f"{where}: the record ends before {who}'s exit deadline")
            return
        late = not world.within(clock, last, bound)
        if cut is not None and not released and not late:
            return  # frozen or killed within its time, before it wrote the Lease free
        self.required += 1
        if late:
            self.fail("release", index, f"{where}: {who} "
                      f"{'exited only' if cut is None else 'still running'} at "
                      f"{self.describe(last)}, over {bound:g}s{since}")
        if released:
            self.judged["release"] += 1
            self.takeover(released[0], who, self.setup.takeover_after_release_s, "release")
        elif cut is None:
            self.fail("release", index, f"{where}: {who} held the Lease and exited "
                      f"({self.describe(end)}) without writing it free")

    def exit_clock(self, who: str, index: int, end: int) -> tuple[int, int | None]:
        """The exit deadline of ``who``, SIGTERMed at step ``index`` and gone at ``end``,
        runs while it runs: from the SIGTERM, or afresh from its last SIGCONT (in its
        favour). Returns (the step it runs from, the step that cut it short: a SIGSTOP it
        was not resumed from or that came past its deadline, or a SIGKILL; None if neither
        came before ``end``)."""
        clock, cut = index, None
        for i, event, w, _ in self.world.markers:
            if w != who or not index < i < end:
                continue
            if event == "sigstop" and cut is None:
                if not self.world.within(clock, i, self.setup.exit_s):
                    return clock, i  # it ran past its deadline before the freeze
                cut = i
            elif event == "sigcont":
                clock, cut = i, None
            elif event == "sigkill":
                return clock, cut if cut is not None else i
        return clock, cut

    def lost(self, index: int, who: str) -> None:
        world = self.world
        resumed = next((i for i, e, w, _ in world.markers
                        if i > index and w == who and e in ("sigcont", "sigkill", "sigterm")),
                       None)
        taken = [i for i in range(index + 1, resumed if resumed is not None else len(
            world.steps)) if world.steps[i].kind == "lease" and world.steps[i].succeeded
                 and world.lease[i].holder not in ("", who)]
        self.takeover(index, who, self.setup.takeover_after_death_s, "freeze")
        if resumed is None or world.steps[resumed].marker_event[0] != "sigcont" or not taken:
            return
        where, bound = self.describe(resumed), self.setup.exit_after_loss_s
        exited = self.exit_after(who, resumed)
        stopped = next((i for i, e, w, _ in world.markers if i > resumed and w == who
                        and e in ("sigterm", "sigkill")), None)
        if stopped is not None and (exited is None or stopped < exited[0]):
            if world.within(resumed, stopped, bound):
                return  # asked to stop, or killed, within its time: not judged
            exited = None  # it did not exit on its own in time
        self.required += 1
        taker = self.describe(taken[0])
        if exited is None or not world.within(resumed, exited[0], bound):
            if exited is None and stopped is None and not world.deadline_passed(resumed, bound):
                self.undecided.append(f"{where}: the record ends before {who}'s exit deadline")
                return
            self.fail("exit-on-loss", resumed, f"{where}: {who} lost the Lease while frozen "
                      f"({taker}) and did not exit on its own within {bound:g}s of resuming")
        elif exited[1] == 0:
            self.fail("exit-on-loss", resumed, f"{where}: {who} lost the Lease while frozen "
                      f"({taker}) and exited 0: the code must say it is not the master")
        else:
            self.judged["exit-on-loss"] += 1

    def kills(self) -> None:
        """A holder killed, or gone on its own (not asked to stop): a standby takes over."""
        for index, event, who, _ in self.world.markers:
            if who not in self.setup.replicas or self.world.lease[index].holder != who:
                continue
            if event == "sigkill" or (event == "exited" and not self.world.marker_between(
                    who, ("sigterm", "sigkill"), self.started(who, index), index)):
                self.takeover(index, who, self.setup.takeover_after_death_s, event)

    def wrote_lease(self, who: str, index: int) -> bool:
        """``who``'s current process (since its latest start) wrote the Lease before
        step ``index``."""
        return self.last_write(who, index) is not None

    def last_write(self, who: str, index: int) -> int | None:
        """Index of the last Lease write of ``who``'s current process before step ``index``."""
        steps = self.world.steps
        return max((i for i in range(self.started(who, index) + 1, index)
                    if steps[i].kind == "lease" and steps[i].actor == who), default=None)

    def started(self, who: str, index: int) -> int:
        """Index of ``who``'s latest start marker before ``index`` (-1: none)."""
        return max((i for i, e, w, _ in self.world.markers
                    if w == who and e == "start" and i < index), default=-1)

    def takeover(self, index: int, old: str, seconds: float, what: str, *,
                 thawed: str = "") -> None:
        """After ``old`` left the Lease at step ``index``, a standby that was competing
        then (it had tried for the Lease since it started), running and not frozen, and
        stays undisturbed holds it within ``seconds``. A frozen standby competes for
        nothing until it is thawed (``thaws``): from its SIGCONT (step ``index``, its
        identity ``thawed``) it has the bound again."""
        world = self.world
        window = world.window(index, seconds)
        competing = [s for s in self.setup.replicas if s != old and self.competing(s, index)
                     and (s == thawed or not self.frozen(s, index))]
        if any(world.lease[i].holder in self.setup.replicas and world.lease[i].holder != old
               for i in window):  # a competing standby, or another replica faster than it
            self.required += 1
            self.judged["takeover"] += 1
            return
        standbys = [s for s in competing if not world.signalled(s, index, seconds)]
        if not standbys:
            self.thaws(index, old, what)
            return
        if any(world.steps[i].kind == "marker" and world.steps[i].marker_event[1] == old
               and world.steps[i].marker_event[0] in ("start", "sigcont") for i in window):
            return  # the old holder came back: it may renew
        if any(world.steps[i].kind == "lease" and world.steps[i].actor not in
               self.setup.replicas for i in window):
            return  # someone else (the executor) wrote the Lease meanwhile
        self.required += 1
        if not world.deadline_passed(index, seconds):
            self.undecided.append(f"{self.describe(index)}: the record ends before the "
                                  f"take-over deadline")
            return
        self.fail("takeover", index, f"{self.describe(index)}: after the {what} of the holder "
                  f"{old}, no standby of {standbys} (each competing for the Lease before) "
                  f"held it within {seconds:g}s (holder at the end: "
                  f"{world.lease[-1].holder or '<nobody>'!r})")

    def thaws(self, index: int, old: str, what: str) -> None:
        """No standby could take over after step ``index`` (each frozen, or stopped within
        the bound): the first SIGCONT of a frozen standby after it, while nobody else took
        the Lease and ``old`` did not come back, starts the take-over anew, with the bound
        after a death (it may have to see the Lease unrenewed for a lease duration first:
        C7/C8's bounds in ``components.harness.controller``)."""
        world = self.world
        for at, event, who, _ in world.markers:
            if at <= index:
                continue
            if who == old and event in ("start", "sigcont"):
                return  # the old holder came back: it may renew
            if any(world.lease[i].holder not in ("", old) for i in range(index + 1, at + 1)):
                return  # someone took (or wrote) the Lease meanwhile
            if event == "sigcont" and who in self.setup.replicas \
                    and self.competing(who, at) and self.frozen(who, at):
                self.takeover(at, old, self.setup.takeover_after_death_s,
                              f"{what} (counted from the SIGCONT of {who})", thawed=who)
                return

    def competing(self, who: str, index: int) -> bool:
        """``who`` runs (started, not since stopped) and tried for the Lease since it
        started, before step ``index``."""
        started = self.started(who, index)
        if started < 0 or any(started < i < index and w == who and e in (
                "sigkill", "exited", "sigterm") for i, e, w, _ in self.world.markers):
            return False
        return any(started < i <= index and s.actor == who and s.kind in ("attempt", "lease")
                   for i, s in enumerate(self.world.steps))

    def chances(self) -> None:
        """Count the chances a wrong controller had to break a forbidden rule that this
        one did not take (``judged``): pods a transition's holder had to leave (other
        labels, namespaces, nodes), a second replica running at a transition, pods on a
        NotReady node past the bound after its last trigger, a standby trying while
        another holds the Lease."""
        world, bound = self.world, self.setup.reaction_s
        triggered: dict[str, int] = {}
        late: set[str] = set()
        stealers: set[str] = set()
        for index, step in enumerate(world.steps):
            lease = world.lease[index]
            if step.kind == "attempt" and step.actor in self.setup.replicas \
                    and lease.holder in self.setup.replicas and lease.holder != step.actor \
                    and world.able(lease.holder, index) and step.actor not in stealers:
                stealers.add(step.actor)
                self.judged["steal"] += 1
            if step.kind == "node" and step.node is not None and step.node.not_ready:
                before = world.node_at(index - 1, step.node.name)
                if before is not None and (before.ready == "True"
                                           or _fence_landed(before, step.node)):
                    triggered[step.node.name] = index
                    if before.ready == "True" and lease.holder in self.setup.replicas \
                            and world.able(lease.holder, index):
                        self.left_alone(index, step.node.name, lease.holder)
            holder = lease.holder
            if holder not in self.setup.replicas or not world.able(holder, index):
                continue
            acquired = max((i for i, h in world.acquisitions if h == holder and i <= index),
                           default=-1)
            for uid, pod in world.pods[index].items():
                node = world.node_at(index, pod.node)
                if uid in late or node is None or not node.not_ready or not self.chosen(pod):
                    continue
                since = max(triggered.get(pod.node, -1), acquired)
                if since >= 0 and not world.within(since, index, bound):
                    late.add(uid)
                    self.judged["trigger"] += 1

    def left_alone(self, index: int, node: str, holder: str) -> None:
        """At the transition of ``node`` (step ``index``): the pods its holder must leave."""
        for pod in self.world.pods[index].values():
            on_it = pod.node == node
            if on_it and pod.namespace in self.setup.namespaces \
                    and not self.selector.matches(pod.label_map):
                self.judged["selector"] += 1
            elif on_it and pod.namespace not in self.setup.namespaces \
                    and self.selector.matches(pod.label_map):
                self.judged["namespace"] += 1
            elif not on_it and self.chosen(pod):
                self.judged["node"] += 1
        if any(w != holder and self.competing(w, index) for w in self.setup.replicas):
            self.judged["leader"] += 1

    def expiries(self) -> None:
        """A Lease someone else left before any replica held it (a leader that died
        before any replica ran) is never renewed: the first competing replica to see it
        takes it over within the bound after a death (C7), counted from when it first
        tried."""
        world = self.world
        for index, step in enumerate(world.steps):
            if step.kind != "lease" or not step.succeeded or step.actor in self.setup.replicas \
                    or world.lease[index].holder in ("", *self.setup.replicas) \
                    or (index > 0 and world.lease[index - 1].holder in self.setup.replicas):
                continue  # a replica's Lease taken by an outsider: its death or freeze rules
            seen = next((i for i in range(index + 1, len(world.steps))
                         if world.steps[i].actor in self.setup.replicas
                         and world.steps[i].kind in ("attempt", "lease")), None)
            if seen is not None and world.lease[seen - 1].last_write == index:
                self.takeover(seen, world.lease[index].holder,
                              self.setup.takeover_after_death_s, "expiry")

    def standbys(self) -> None:
        """C8: a replica not holding the Lease tries for it at least every
        ``standby_gap_s`` (from its start on) and does not exit unasked, unless it held the
        Lease since it started (a leader that lost it must exit: C6)."""
        world, bound = self.world, self.setup.standby_gap_s
        stops = ("sigstop", "sigkill", "sigterm", "exited")
        for who in self.setup.replicas:
            tries = [i for i, s in enumerate(world.steps) if s.actor == who
                     and s.kind in ("attempt", "lease")]
            for start, _, _, _ in (m for m in world.markers if m[1] == "start" and m[2] == who):
                stop = next((i for i, e, w, _ in world.markers if i > start and w == who
                             and e in stops), len(world.steps))
                mine = [i for i in tries if start < i < stop]
                held = any(world.lease[i].holder == who for i in range(start, stop))
                if stop < len(world.steps) and world.steps[stop].marker_event[0] == "exited" \
                        and not held:
                    self.fail("standby", stop, f"{self.describe(stop)}: {who} exited on its "
                              "own without having held the Lease (a standby keeps trying)")
                    continue
                last = min(stop, len(world.steps) - 1)
                for a, b in zip([start, *mine], [*mine, last], strict=True):
                    if world.lease[a].holder == who or (a == b):
                        continue
                    gap = (world.time(b)[0] - world.time(a)[1]).total_seconds()
                    if gap <= bound + (STARTUP_S if a == start else 0.0):
                        self.judged["standby"] += int(b != last)
                        continue
                    self.fail("standby", b, f"{self.describe(a)} .. {self.describe(b)}: "
                              f"{who}, not holding the Lease, did not try for it for "
                              f"{gap:.1f}s (bound {bound:g}s: 2 x the seed's pace "
                              f"{self.setup.pace_s:g}s + a jittered retry + margin)")
                    break


def check(history: History, setup: Setup) -> Verdict:
    """The model's verdict on ``history``: every forbidden deletion and Lease write, every
    required deletion and Lease event missed, and what the record cannot decide."""
    judge = _Judge(_World.build(list(history.steps)), setup, labels.parse(setup.selector))
    judge.deletes()
    judge.steals()
    judge.transitions()
    judge.new_leaders()
    judge.signals()
    judge.kills()
    judge.expiries()
    judge.standbys()
    judge.chances()
    ordered = sorted(judge.violations, key=lambda v: v.index)
    return Verdict(tuple(ordered), tuple(dict.fromkeys(judge.undecided)), judge.required,
                   tuple(judge.notes), dict(sorted(judge.judged.items())))


def with_bound(setup: Setup, reaction_s: float) -> Setup:
    """``setup`` with another reaction bound (tests)."""
    return replace(setup, reaction_s=reaction_s)
