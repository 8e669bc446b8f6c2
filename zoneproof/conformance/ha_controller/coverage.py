"""Which model rules a schedule can expose, before it runs: the generated suite's coverage.

A rule is *exposed* by a schedule when its events give a wrong controller the chance to
break it: a Ready -> NotReady transition of a node with matching pods while a replica
runs (``transition``, ``force``), other pods it must leave then (``selector``,
``namespace``, ``node``), a second replica running then (``leader``), a matching pod on a
NotReady node bound past the reaction bound after its last trigger, or there when the
node recovers then or is made again not Ready (``trigger``), a transition
while no replica runs and a replica started after (``new-leader``), the leader SIGTERMed
(``release``), frozen while another takes over (``exit-on-loss``), killed, released or
its Lease left by a dead leader while another replica competes (``takeover``), two
replicas running together past a standby's longest gap (``standby``) and past a retry
(``steal``). Pure: it reads the schedule's events and counts their waits (the executor's
API calls take more, never less), so it can be computed over a drawn batch without a bed.

``report`` counts, per rule, the schedules of a batch that expose it; the suite prints it
beside the verdicts' per-rule ``judged`` counts (how often the record let the checker
decide each rule), so a rule no schedule reaches is visible, never a silent pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zoneproof.conformance.ha_controller.model import RULES, Setup
from zoneproof.conformance.ha_controller.schedule import Event, PodSpec, Schedule

__all__ = ["exposed", "format_report", "report"]


_NAMES = ("0", "1")


@dataclass
class _State:
    """The schedule's world as its events leave it (times are the sums of waits)."""

    schedule: Schedule
    setup: Setup
    now: float = 0.0
    ready: list[str] = field(default_factory=list)
    trigger: dict[int, float] = field(default_factory=dict)
    pods: dict[str, PodSpec] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    frozen: set[str] = field(default_factory=set)
    acquired: float = 0.0
    """When the Lease last changed hands (a catch-up may act on any pod then)."""
    leader: str | None = None
    together: float | None = None
    """Since when two replicas run (unfrozen) side by side."""
    missed: set[int] = field(default_factory=set)
    """Nodes that went NotReady while no replica ran."""
    found: set[str] = field(default_factory=set)

    def chosen(self, pod: PodSpec) -> bool:
        return pod.labels < 0 and pod.namespace != "u" and \
            pod.namespace in ("w1", "w2")[:self.schedule.watched]

    @property
    def active(self) -> set[str]:
        return self.running - self.frozen

    def elapse(self, seconds: float) -> None:
        self.now += seconds
        if self.together is not None and self.now - self.together >= self.setup.retry_s:
            self.found.add("steal")
        if self.together is not None and self.now - self.together > self.setup.standby_gap_s:
            self.found.add("standby")

    def bind(self, pod: PodSpec) -> None:
        """``pod`` is bound now: past the bound after its NotReady node's last trigger (and
        the last change of leader), a controller that sweeps, at any period, deletes it
        for no trigger."""
        self.pods[pod.name] = pod
        since = max(self.trigger.get(pod.node, -1e9), self.acquired)
        if self.active and self.ready[pod.node] != "True" and self.chosen(pod) \
                and self.now - since > self.setup.reaction_s:
            self.found.add("trigger")

    def replicas(self, running: set[str], frozen: set[str]) -> None:
        before = len(self.active) >= 2
        self.running, self.frozen = running, frozen
        if len(self.active) >= 2 and not before:
            self.together = self.now
        elif len(self.active) < 2:
            self.together = None

    def node_event(self, event: Event) -> None:
        node = event.node
        if event.kind == "ready":
            was, self.ready[node] = self.ready[node], event.status
            if was == "True" and event.status != "True":
                self.trigger[node] = self.now
                self.transition(node)
            elif was != "True" and event.status == "True":
                self.missed.discard(node)
                if self.active and any(self.chosen(p) and p.node == node
                                       and self.now - max(self.trigger.get(node, -1e9),
                                                          self.acquired)
                                       > self.setup.reaction_s
                                       for p in self.pods.values()):
                    self.found.add("trigger")  # a recovery past the bound: nothing to do
        elif event.kind == "fence" and event.on and self.ready[node] != "True":
            self.trigger[node] = self.now

    def renode(self, event: Event) -> None:
        """Node ``event.node`` made again: no transition, whatever its first status; a
        controller that compares it with the node it replaced deletes its pods for none."""
        node = event.node
        self.ready[node] = event.status
        self.trigger.pop(node, None)
        self.missed.discard(node)
        if self.active and event.status != "True" and any(
                self.chosen(p) and p.node == node for p in self.pods.values()):
            self.found.add("trigger")

    def transition(self, node: int) -> None:
        on_it = [p for p in self.pods.values() if p.node == node]
        if not self.active:
            if any(self.chosen(p) for p in on_it):
                self.missed.add(node)
            return
        if any(self.chosen(p) for p in on_it):
            self.found |= {"transition", "force"}
            self.gone(node)
        if any(p.namespace != "u" and p.labels >= 0 for p in on_it):
            self.found.add("selector")
        if any(p.namespace == "u" and p.labels < 0 for p in on_it):
            self.found.add("namespace")
        if any(self.chosen(p) and p.node != node and self.ready[p.node] == "True"
               for p in self.pods.values()):
            self.found.add("node")
        if len(self.active) >= 2 and on_it:
            self.found.add("leader")

    def gone(self, *nodes: int) -> None:
        """A correct controller deleted the chosen pods of ``nodes``."""
        self.pods = {k: p for k, p in self.pods.items()
                     if not (self.chosen(p) and p.node in nodes)}

    def lead(self) -> None:
        """The Lease changes hands: the new leader catches up on the NotReady nodes."""
        self.acquired = self.now
        if self.missed and any(self.chosen(p) and p.node in self.missed
                               for p in self.pods.values()):
            self.found.add("new-leader")
        self.gone(*(i for i, r in enumerate(self.ready) if r != "True"))
        self.missed.clear()

    def start(self) -> None:
        if self.schedule.dead_leader and not self.running:
            self.found.add("takeover")

    def started(self, target: str) -> None:
        """Replica ``target`` (an index, or the first one ``dead``) starts."""
        who = target if target in _NAMES else next(
            (n for n in _NAMES if n not in self.running), None)
        if who is None or who in self.running:
            return
        self.start()
        self.replicas(self.running | {who}, self.frozen)
        if self.leader not in self.active:
            self.leader = who
            self.lead()

    def signalled(self, event: Event) -> None:
        """The replica ``event`` names gets its signal."""
        if event.target == "leader":
            who = self.leader
        elif event.target == "frozen":
            who = next(iter(sorted(self.frozen)), None)
        elif event.target in _NAMES:
            who = event.target
        else:
            who = next((n for n in sorted(self.active) if n != self.leader), None)
        if who is None:
            return
        running, frozen = self.running, self.frozen
        if event.signal in ("SIGTERM", "SIGKILL"):
            running, frozen = running - {who}, frozen - {who}
        elif event.signal == "SIGSTOP":
            frozen = frozen | {who}
        elif event.signal == "SIGCONT":
            frozen = frozen - {who}
        self.replicas(running, frozen)
        if who == self.leader and who not in self.active:
            self.leader = next(iter(sorted(self.active)), None)
            if self.leader is not None:
                self.lead()

    def signal(self, event: Event) -> None:
        others = len(self.active) >= 2
        if event.target == "leader" and self.active:
            if event.signal == "SIGTERM":
                self.found.add("release")
            if others and event.signal in ("SIGTERM", "SIGKILL", "SIGSTOP"):
                self.found.add("takeover")
            if others and event.signal == "SIGSTOP":
                self.found.add("exit-on-loss")


def exposed(schedule: Schedule, setup: Setup) -> frozenset[str]:
    """The ids of the rules ``schedule`` gives a wrong controller the chance to break."""
    state = _State(schedule, setup, ready=["True" if n.reported else "" for n in schedule.nodes])
    for pod in schedule.pods:
        state.pods[pod.name] = pod
    for event in schedule.events:
        if event.kind == "wait":
            state.elapse(event.seconds)
        elif event.kind in ("ready", "fence"):
            state.node_event(event)
        elif event.kind == "renode":
            state.renode(event)
        elif event.kind == "pod" and event.pod is not None:
            state.bind(event.pod)
        elif event.kind == "recreate" and event.name in state.pods:
            old = state.pods[event.name]
            state.bind(PodSpec(old.name, event.node, old.namespace, old.labels))
        elif event.kind == "terminate":
            state.pods.pop(event.name, None)
        elif event.kind == "start":
            state.started(event.target)
        elif event.kind == "signal":
            state.signal(event)
            state.signalled(event)
    state.elapse(3.0)  # after the events the executor keeps the record going, at least this
    return frozenset(state.found)


def report(schedules: Iterable[Schedule], setup: Setup) -> dict[str, int]:
    """Per rule id (every rule, in ``RULES`` order), how many of ``schedules`` expose it."""
    counts = dict.fromkeys(RULES, 0)
    for schedule in schedules:
        for rule in exposed(schedule, setup):
            counts[rule] += 1
    return counts


def format_report(exposing: dict[str, int], schedules: int,
                  judged: dict[str, int] | None = None) -> str:
    """One line per rule: its row, the schedules exposing it and (after a run) the
    histories whose record let the checker decide it."""
    lines = []
    for rule_id, rule in RULES.items():
        line = f"{rule_id:13} {rule.row:9} exposed by {exposing.get(rule_id, 0):3}/{schedules}"
        if judged is not None:
            line += f", decided in {judged.get(rule_id, 0):3} run(s)"
        lines.append(line)
    return "\n".join(lines)
