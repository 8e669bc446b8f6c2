"""A schedule of cluster events for the generated controller suite: plain data.

A schedule names its nodes (by index), its pods (by name) and, in order, what happens to
them and to the controller's replicas: Ready flips, fences, cordons and taints, nodes
deleted and re-created, pods bound, their phases, replicas started and signalled, waits.
``describe`` prints it one event a line (a failure shows it shrunk); ``to_dict``/``from_dict``
keep it as JSON (a case file a vendor can replay); ``without`` drops events for shrinking,
and what they introduced with them (a pod never created takes its later events along).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from zoneproof import errors
from zoneproof.conformance.ha_controller import casefile

__all__ = ["SIGNALS", "Event", "NodeSpec", "PodSpec", "Schedule"]

#: What a replica may be sent.
SIGNALS = ("SIGTERM", "SIGKILL", "SIGSTOP", "SIGCONT")
#: Whom a signal or start names: a replica by index, or by its state at that moment (the
#: leader is waited for; a frozen one is thawed, a dead one restarted).
TARGETS = ("leader", "standby", "frozen", "dead", "0", "1")


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node the executor makes: ``zone`` a or b (two nodes of one zone test the failed
    node's zone-mates), ``reported``: it posts Ready=True at once (else it never reported)."""

    zone: str = "a"
    reported: bool = True


@dataclass(frozen=True, slots=True)
class PodSpec:
    """A pod bound to node ``node`` (index) in namespace ``namespace`` (``w1``, ``w2``
    watched; ``u`` not), with labels that match the selector (``labels`` -1: the smallest
    set; below it: the ``-1 - labels``-th of ``labels.Selector.matching``) or miss it the
    ``labels``-th way (``labels.Selector.misses``), in ``phase``, gracefully deleted
    already (``terminating``) or not."""

    name: str
    node: int
    namespace: str = "w1"
    labels: int = -1
    phase: str = "Running"
    terminating: bool = False


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happens: ``kind`` and its arguments.

    ``ready`` node status (True/False/Unknown) · ``fence`` node on (kcm's NoSchedule
    not-ready or unreachable taint; ``key``) · ``cordon`` node on · ``taint`` node on (an
    unrelated NoSchedule taint) · ``pod`` pod (bound now) · ``phase`` pod phase ·
    ``terminate`` pod (a graceful delete) · ``recreate`` pod node (a new pod of that name,
    once the old one is gone) · ``renode`` node status (the Node object deleted and made
    again under its name, its pods left bound to it; Ready ``status`` posted, or none
    if '') · ``start`` target · ``signal`` target signal · ``intrude``
    (an outsider takes the Lease once it expired) · ``leader`` (until a replica leads) ·
    ``wait`` seconds.
    """

    kind: str
    node: int = -1
    status: str = ""
    on: bool = True
    key: str = ""
    pod: PodSpec | None = None
    name: str = ""
    phase: str = ""
    target: str = ""
    signal: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        """One line."""
        if self.kind == "wait":
            return f"wait {self.seconds:g}s"
        if self.kind == "ready":
            return f"node {self.node} Ready={self.status}"
        if self.kind in ("fence", "cordon", "taint"):
            extra = f" {self.key}" if self.key else ""
            return f"node {self.node} {self.kind}{extra} {'on' if self.on else 'off'}"
        if self.kind == "pod" and self.pod is not None:
            return f"bind {_pod(self.pod)}"
        if self.kind == "phase":
            return f"pod {self.name} phase {self.phase}"
        if self.kind == "terminate":
            return f"pod {self.name} deleted gracefully (terminating)"
        if self.kind == "recreate":
            return f"pod {self.name} re-created on node {self.node}"
        if self.kind == "renode":
            return (f"node {self.node} deleted and re-created, "
                    f"{f'Ready={self.status}' if self.status else 'never reported'}")
        if self.kind == "start":
            return f"start replica {self.target}"
        if self.kind == "signal":
            return f"{self.signal} {self.target}"
        if self.kind == "leader":
            return "until a replica leads"
        return self.kind


def _pod(pod: PodSpec) -> str:
    if pod.labels >= 0:
        labels = f"missing the selector (way {pod.labels})"
    else:
        labels = "matching" if pod.labels == -1 else f"matching (way {-1 - pod.labels})"
    state = f"{pod.phase}{', terminating' if pod.terminating else ''}"
    return f"pod {pod.name} in {pod.namespace} on node {pod.node}, {labels}, {state}"


@dataclass(frozen=True, slots=True)
class Schedule(casefile.CaseFile):
    """Nodes and pods made first, a dead leader's Lease or not, then ``events`` in order."""

    WHAT: ClassVar[str] = "controller schedule"

    nodes: tuple[NodeSpec, ...]
    pods: tuple[PodSpec, ...] = ()
    events: tuple[Event, ...] = ()
    watched: int = 2
    """How many namespaces the controller is told to watch (``w1``, ``w2``)."""
    dead_leader: bool = False
    """The Lease exists before any replica runs, held by a leader that died."""
    notes: dict[str, Any] = field(default_factory=dict, compare=False)

    def describe(self) -> str:
        """The schedule, one item a line."""
        lines = [f"{len(self.nodes)} node(s): " + ", ".join(
            f"{i} zone {n.zone}{'' if n.reported else ' (never reported)'}"
            for i, n in enumerate(self.nodes)),
            f"watched namespaces: {', '.join(['w1', 'w2'][:self.watched])}"]
        if self.dead_leader:
            lines.append("the Lease held by a leader that died")
        lines += [_pod(p) for p in self.pods]
        lines += [f"{i + 1}. {e.describe()}" for i, e in enumerate(self.events)]
        return "\n".join(lines)

    @property
    def size(self) -> int:
        """What shrinking counts: events, pods and nodes."""
        return len(self.events) + len(self.pods) + len(self.nodes)

    @property
    def weight(self) -> tuple[int, float, int, int]:
        """What shrinking lowers: items, then seconds of waits, then a dead leader's Lease,
        then watched namespaces."""
        return (self.size, self.seconds, int(self.dead_leader), self.watched)

    @property
    def seconds(self) -> float:
        """The schedule's waits added up."""
        return sum(e.seconds for e in self.events if e.kind == "wait")

    def without(self, *, events: Iterable[int] = (), pods: Iterable[str] = (),
                nodes: Iterable[int] = ()) -> Schedule:
        """The schedule with those events, pods and nodes dropped, and every event about a
        dropped pod or node (node indices renumbered)."""
        gone_nodes, gone_pods = set(nodes), set(pods)
        dropped = set(events)
        for i, event in enumerate(self.events):
            if event.kind == "pod" and event.pod is not None and (
                    i in dropped or event.pod.name in gone_pods or event.pod.node in gone_nodes):
                gone_pods.add(event.pod.name)
                dropped.add(i)
        gone_pods |= {p.name for p in self.pods if p.node in gone_nodes}
        renumber = {old: new for new, old in enumerate(
            i for i in range(len(self.nodes)) if i not in gone_nodes)}

        def keep(event: Event) -> bool:
            if event.kind in ("ready", "fence", "cordon", "taint", "recreate", "renode") \
                    and event.node in gone_nodes:
                return False
            return not (event.kind in ("phase", "terminate", "recreate")
                        and event.name in gone_pods)

        def moved(event: Event) -> Event:
            if event.kind == "pod" and event.pod is not None:
                return replace(event, pod=replace(event.pod, node=renumber[event.pod.node]))
            return replace(event, node=renumber[event.node]) if event.node >= 0 else event

        kept = [moved(e) for i, e in enumerate(self.events) if i not in dropped and keep(e)]
        return replace(self, nodes=tuple(n for i, n in enumerate(self.nodes)
                                         if i not in gone_nodes),
                       pods=tuple(replace(p, node=renumber[p.node]) for p in self.pods
                                  if p.name not in gone_pods),
                       events=tuple(kept))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (a case file)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schedule:
        """The schedule ``to_dict`` wrote; ConfigError names what is wrong."""
        try:
            return cls(tuple(NodeSpec(**n) for n in data["nodes"]),
                       tuple(PodSpec(**p) for p in data.get("pods", ())),
                       tuple(Event(**{**e, "pod": PodSpec(**e["pod"]) if e.get("pod") else None})
                             for e in data.get("events", ())),
                       int(data.get("watched", 2)), bool(data.get("dead_leader", False)),
                       dict(data.get("notes") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise errors.ConfigError(f"malformed controller schedule: {exc}") from exc
