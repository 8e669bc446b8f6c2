"""Proof that each fault took effect: every declared effect observed in time.

Each ``Effect`` has one observer here, reading the timeline events its ``observation``
names. An effect of a fault counts as observed if its observer finds it within the
effect's bound (``faults.effects.bounds``, derived from the bed's stated timings) after
the fault was in force (``FaultRecord.in_force``: the injection returned, the cluster
having confirmed it; a node agent acts seconds after its command) and before the revert
(plus ``GRACE_S`` for recorders to catch up). A state (NotReady, unhealthy, cordoned)
counts from the injection on when it already held then (a drain of nodes an earlier fault
cordoned leaves them cordoned); an occurrence (a failed admission, a deleted pod) only
when it happens after the injection. A fault whose effect was not observed in time makes
the verdict ``fault-not-effective``: the experiment did not test what it says, whatever
its SLOs say. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zoneproof.faults.base import FaultRecord
from zoneproof.faults.effects import Bound, Effect, StatedTimings, bounds
from zoneproof.measure.timeline import Event

__all__ = ["GRACE_S", "HEARTBEAT_IN_FLIGHT_S", "OBSERVERS", "EffectCheck", "check",
           "observed_at"]

GRACE_S = 5.0
"""How long after the revert an effect still counts (recorders poll and watch with lag)."""
HEARTBEAT_IN_FLIGHT_S = 1.0
"""A node-Lease renewal seen this soon after the fault was in force was sent before it."""
_SHOWN_APPLYING_S = 0.5
"""An injection that took this long to be in force says so in the effect's message."""

Observer = Callable[[FaultRecord, Sequence[Event], StatedTimings], float | None]


def _after(events: Sequence[Event], fault: FaultRecord, kind: str) -> Iterable[Event]:
    return (e for e in events if e.kind == kind and e.t >= fault.injected_at)


def _state(events: Sequence[Event], fault: FaultRecord, kind: str, subject: str | None,
           holds: Callable[[Event], bool]) -> float | None:
    """When the state ``holds`` shows for ``subject`` (any subject: None) from the
    injection on: the injection itself if the last event before it shows it, else the
    first event after it that does."""
    mine = [e for e in events if e.kind == kind and (subject is None or e.subject == subject)]
    before = [e for e in mine if e.t < fault.injected_at]
    if before and holds(before[-1]):
        return fault.injected_at
    return _first_t(e for e in mine if e.t >= fault.injected_at and holds(e))


def _each_target(fault: FaultRecord, first: Callable[[str], float | None]) -> float | None:
    """When the last target showed it (None if one never did or there is no target)."""
    seen = [first(target) for target in fault.targets]
    if not seen or any(t is None for t in seen):
        return None
    return max(t for t in seen if t is not None)


def _first_t(events: Iterable[Event]) -> float | None:
    return next((e.t for e in events), None)


def _nodes_not_ready(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                     ) -> float | None:
    return _each_target(fault, lambda node: _state(
        events, fault, "node_ready", node, lambda e: e.detail.get("status") != "True"))


def _members_down(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                  ) -> float | None:
    return _each_target(fault, lambda member: _state(
        events, fault, "etcd_member", member, lambda e: e.detail.get("healthy") == "False"))


def _quorum_lost(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                 ) -> float | None:
    healthy: dict[str, bool] = {}
    for event in events:
        if event.kind == "etcd_member":
            healthy[event.subject] = event.detail.get("healthy") == "True"
        if event.t >= fault.injected_at and healthy and not any(healthy.values()):
            return max(event.t, fault.injected_at)
    return None


def _control_plane_down(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                        ) -> float | None:
    def down(process: str) -> float | None:
        if process == "kube-apiserver":
            return _state(events, fault, "apiserver_ready", None,
                          lambda e: e.detail.get("ready") == "False")
        return _state(events, fault, "process_alive", process,
                      lambda e: e.detail.get("alive") == "False")

    return _each_target(fault, down)


def _leader_lost(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                 ) -> float | None:
    return _each_target(fault, lambda identity: _state(
        events, fault, "lease_holder", None, lambda e: e.detail.get("holder") != identity))


def _webhook_down(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                  ) -> float | None:
    return _first_t(e for e in _after(events, fault, "admission_failed")
                    if e.detail.get("selected") == "True")


def _cordoned(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
              ) -> float | None:
    return _each_target(fault, lambda node: _state(
        events, fault, "node_schedulable", node, lambda e: e.detail.get("schedulable") == "False"))


def _drained(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
             ) -> float | None:
    """Every recorded pod on a target when the fault began is deleted or being deleted
    afterwards (the injection itself when there was nothing to drain)."""
    on_targets: set[str] = set()
    for e in events:
        if e.t >= fault.injected_at:
            continue
        uid = e.detail.get("uid", "")
        if e.kind == "pod_scheduled" and e.detail.get("node") in fault.targets:
            on_targets.add(uid)
        elif e.kind in ("pod_deleting", "pod_deleted"):
            on_targets.discard(uid)
    seen = [_first_t(e for e in events if e.t >= fault.injected_at
                     and e.kind in ("pod_deleting", "pod_deleted") and e.detail.get("uid") == uid)
            for uid in sorted(on_targets)]
    if any(t is None for t in seen):
        return None
    return max([fault.injected_at, *(t for t in seen if t is not None)])


def _kubelets_stopped(fault: FaultRecord, events: Sequence[Event], timings: StatedTimings
                      ) -> float | None:
    """When a full node-lease duration passed from the fault being in force with no heartbeat
    of any target while another node's showed the recorder live (None: a target renewed, the
    fault ended first, or no other node proved the recorder live). A kubelet beats until the
    fault is in force: through a node agent that is seconds after the command."""
    stale_at = fault.in_force + timings.node_lease_duration_s
    if fault.reverted_at is not None and fault.reverted_at < stale_at:
        return None
    beats = [e for e in events if e.kind == "node_heartbeat"]
    targets = set(fault.targets)
    if not all(any(e.subject == t and e.t < fault.injected_at for e in beats) for t in targets):
        return None  # never seen beating: its silence proves nothing
    if any(e.subject in targets and fault.in_force + HEARTBEAT_IN_FLIGHT_S < e.t <= stale_at
           for e in beats):
        return None
    live = any(e.subject not in targets and e.t >= stale_at for e in beats)
    return stale_at if live else None


def _leader_changed(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                    ) -> float | None:
    return _first_t(e for e in _after(events, fault, "etcd_leader")
                    if e.detail.get("leader") not in ("", None, *fault.targets))


#: A slowed link counts as slowed once a round trip is this share of the latency added.
LINK_SHARE = 0.8


def _links_slowed(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                  ) -> float | None:
    """When every target link (``faults.zones.link_target``) carried a round trip slower than
    its fastest answered one before the fault (earlier slowings, a loaded machine only add)
    by ``LINK_SHARE`` of the added 2 x latency, either way (one that timed out after that
    long counts: the link took at least that)."""
    from zoneproof.faults.zones import parse_link_target

    def slowed(target: str) -> float | None:
        parsed = parse_link_target(target)
        if parsed is None:
            return None
        a, b, ms = parsed
        mine = [e for e in events if e.kind == "link_rtt" and e.detail.get("seconds")
                and {e.detail.get("source"), e.subject} == {a, b}]
        before = [float(e.detail["seconds"]) for e in mine if e.t < fault.injected_at
                  and e.detail.get("answered") != "False"]
        if not before:
            return None  # never measured before: a slow round trip proves nothing
        wanted = min(before) + LINK_SHARE * 2 * ms / 1000
        return _first_t(e for e in mine if e.t >= fault.in_force
                        and float(e.detail["seconds"]) >= wanted)

    return _each_target(fault, slowed)


def _names_unresolved(fault: FaultRecord, events: Sequence[Event], _: StatedTimings
                      ) -> float | None:
    """When the last resolver pod Ready before the fault turned not Ready after it (None:
    no resolver pod was Ready before, or one stayed Ready)."""
    last: dict[str, str] = {}
    for e in events:
        if e.kind == "pod_readiness" and e.t < fault.injected_at:
            last[e.subject] = e.detail.get("ready", "")
    resolvers = sorted(pod for pod, ready in last.items() if ready == "True")
    seen = [_first_t(e for e in _after(events, fault, "pod_readiness")
                     if e.subject == pod and e.detail.get("ready") == "False")
            for pod in resolvers]
    if not seen or any(t is None for t in seen):
        return None
    return max(t for t in seen if t is not None)


OBSERVERS: dict[Effect, Observer] = {
    Effect.KUBELETS_STOPPED: _kubelets_stopped,
    Effect.NODES_NOT_READY: _nodes_not_ready,
    Effect.ETCD_MEMBERS_DOWN: _members_down,
    Effect.ETCD_LEADER_CHANGED: _leader_changed,
    Effect.ETCD_QUORUM_LOST: _quorum_lost,
    Effect.CONTROL_PLANE_DOWN: _control_plane_down,
    Effect.CONTROLLER_LEADER_LOST: _leader_lost,
    Effect.WEBHOOK_DOWN: _webhook_down,
    Effect.NODES_CORDONED: _cordoned,
    Effect.NODES_DRAINED: _drained,
    Effect.LINKS_SLOWED: _links_slowed,
    Effect.NAMES_UNRESOLVED: _names_unresolved,
}


def observed_at(effect: Effect, fault: FaultRecord, events: Sequence[Event],
                timings: StatedTimings) -> float | None:
    """When the timeline first shows ``effect`` of ``fault`` (None: it never does)."""
    return OBSERVERS[effect](fault, events, timings)


@dataclass(frozen=True, slots=True)
class EffectCheck:
    """Whether one declared effect of one fault was observed in time (within ``bound_s``
    of the injection, derived as ``bound`` says)."""

    fault: str
    targets: tuple[str, ...]
    effect: str
    injected_at: float
    observed_at: float | None
    effective: bool
    message: str
    bound_s: float | None = None
    bound: str = ""

    @property
    def after_s(self) -> float | None:
        """Seconds from the injection to the observation (None: never observed)."""
        return None if self.observed_at is None else self.observed_at - self.injected_at

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the journal)."""
        return {"fault": self.fault, "targets": list(self.targets), "effect": self.effect,
                "injected_at": self.injected_at, "observed_at": self.observed_at,
                "effective": self.effective, "message": self.message,
                "bound_s": self.bound_s, "bound": self.bound}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EffectCheck:
        """The check ``to_dict`` wrote."""
        return cls(str(data["fault"]), tuple(data["targets"]), str(data["effect"]),
                   float(data["injected_at"]),
                   None if data["observed_at"] is None else float(data["observed_at"]),
                   bool(data["effective"]), str(data["message"]),
                   None if data.get("bound_s") is None else float(data["bound_s"]),
                   str(data.get("bound", "")))


def _judge(effect: Effect, fault: FaultRecord, at: float | None, until: float,
           bound: Bound) -> tuple[bool, str]:
    where = ", ".join(fault.targets) or "no target"
    what = f"{effect} of {fault.kind} ({where})"
    limit = f"bound {bound.seconds:g} s: {bound.derivation}"
    if at is None:
        return False, f"{what} never observed ({limit}): {effect.observation}"
    after = at - fault.injected_at
    applying = fault.in_force - fault.injected_at
    when = f"{after:.1f} s after injection" + (
        f" (in force {applying:.1f} s after it)" if applying >= _SHOWN_APPLYING_S else "")
    if at - fault.in_force > bound.seconds:
        return False, f"{what} observed {when}, later than its {limit} from the fault in force"
    if at > until:
        return False, f"{what} observed {when}, after the fault ended (+{GRACE_S:g} s)"
    return True, f"{what} observed {when} (within {bound.seconds:g} s of the fault in force)"


def check(faults: Iterable[FaultRecord], events: Sequence[Event],
          timings: StatedTimings) -> list[EffectCheck]:
    """One check per declared effect of every fault: observed within its bound under
    ``timings``, and by its revert + GRACE_S (the end of the timeline while never reverted)?"""
    checks = []
    limits = bounds(timings)
    end = max((e.t for e in events), default=0.0)
    for fault in faults:
        until = (fault.reverted_at if fault.reverted_at is not None else end) + GRACE_S
        for effect in fault.effects:
            at = observed_at(effect, fault, events, timings)
            effective, message = _judge(effect, fault, at, until, limits[effect])
            checks.append(EffectCheck(fault.kind, fault.targets, str(effect), fault.injected_at,
                                      at, effective, message, limits[effect].seconds,
                                      limits[effect].derivation))
    return checks
