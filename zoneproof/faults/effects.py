"""What a fault must cause, each effect named with the observation that proves it, and how
soon it must show: a bound per effect derived from the bed's stated timings.

A fault kind declares its effects (``Fault.effects``); its ``FaultRecord`` carries them.
Figures choose the records they are about by effect (``slo.figures``), and the run checks
each declared effect was observed within its bound after the fault was in force
(``slo.effect_checks``): a fault that did not take effect, or took it later than the bed's
timings allow, is never a pass. ``bounds`` derives the bounds from ``StatedTimings`` (the
cluster's ``Timings`` and the HA controller's Lease timings) and says how, for the report.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any

from zoneproof.cluster.spec import Timings
from zoneproof.components.harness.controller import ControllerSettings

__all__ = ["OBSERVATIONS", "Bound", "Effect", "StatedTimings", "bounds"]


class Effect(enum.StrEnum):
    """An effect a fault must cause; stable names for reports (``observation`` says how it
    is seen on the run's timeline)."""

    KUBELETS_STOPPED = "kubelets-stopped"
    NODES_NOT_READY = "nodes-not-ready"
    ETCD_MEMBERS_DOWN = "etcd-members-down"
    ETCD_LEADER_CHANGED = "etcd-leader-changed"
    ETCD_QUORUM_LOST = "etcd-quorum-lost"
    CONTROL_PLANE_DOWN = "control-plane-down"
    CONTROLLER_LEADER_LOST = "controller-leader-lost"
    WEBHOOK_DOWN = "webhook-down"
    NODES_CORDONED = "nodes-cordoned"
    NODES_DRAINED = "nodes-drained"
    LINKS_SLOWED = "links-slowed"
    NAMES_UNRESOLVED = "names-unresolved"

    @property
    def observation(self) -> str:
        """The timeline events that show this effect happened."""
        return OBSERVATIONS[self]


OBSERVATIONS: dict[Effect, str] = {
    Effect.KUBELETS_STOPPED: "every target node's heartbeat (its Lease in kube-node-lease) is "
                             "not renewed for a node-lease duration, while other nodes' are "
                             "(no node_heartbeat of the target, one of another node)",
    Effect.NODES_NOT_READY: "every target Node's Ready condition leaves True through the "
                            "node-lifecycle controller (node_ready status != True)",
    Effect.ETCD_MEMBERS_DOWN: "every target etcd member reports unhealthy "
                              "(etcd_member healthy=False)",
    Effect.ETCD_LEADER_CHANGED: "another etcd member than the target is leader "
                                "(etcd_leader leader not in the targets)",
    Effect.ETCD_QUORUM_LOST: "every etcd member reports unhealthy at the same time: raft has no "
                             "leader (etcd_member healthy=False for all)",
    Effect.CONTROL_PLANE_DOWN: "the target process is gone: kube-apiserver /readyz fails "
                               "(apiserver_ready ready=False), kube-controller-manager or "
                               "kube-scheduler no longer runs (process_alive alive=False)",
    Effect.CONTROLLER_LEADER_LOST: "the controller Lease is held by someone other than the "
                                   "target replica, or by nobody (lease_holder holder != target)",
    Effect.WEBHOOK_DOWN: "an admission the webhook decides fails (admission_failed)",
    Effect.NODES_CORDONED: "every target Node is unschedulable (node_schedulable "
                           "schedulable=False)",
    Effect.NODES_DRAINED: "every recorded pod on a target Node when the fault began is "
                          "deleted or being deleted (pod_deleting / pod_deleted)",
    Effect.LINKS_SLOWED: "every target link (zone<->zone+Nms) carries a round trip (an etcd "
                         "/health request from one zone to the other, through the zone's end of "
                         "the link) at least the added 2 x N ms x 0.8 slower than its fastest "
                         "before the fault (link_rtt seconds)",
    Effect.NAMES_UNRESOLVED: "every resolver pod Ready before the fault turns not Ready: its "
                             "readiness probe, a lookup of the API's Service name through the "
                             "cluster DNS every second, fails (pod_readiness ready=False)",
}

MARGIN_S = 5.0
"""Added to every bound: recorders poll (0.1-1 s) and watch with lag, and a loaded machine
is slower still."""
API_WRITE_S = 10.0
"""An API write (cordon) and, for the webhook, the next admission attempt (made every 1 s
by ``expect_admissions``) to fail."""
HEALTH_POLL_S = 10.0
"""Until the etcd health recorder has seen a member's new state: every effect on members
(down, quorum lost) is seen through it."""
DRAIN_BUDGET_S = 180.0
"""drain-zone's default eviction budget (its ``timeout_s``)."""
RESOLVER_PROBE_S = 5.0
"""Until a resolver pod's readiness probe (every 1 s, 2 s timeout, one failure) has failed
and the kubelet has written it."""
LINK_PROBE_S = 10.0
"""Until a probe of every slowed link has returned: one per link every second, each
taking the round trip it measures (seconds at the latencies the experiments add)."""


@dataclass(frozen=True, slots=True)
class StatedTimings:
    """The timings a run states: the bed's node lifecycle and etcd, the HA controller's
    Lease (seconds); ``source`` says where the bed's came from."""

    node_monitor_period_s: float
    node_monitor_grace_period_s: float
    node_lease_duration_s: float
    etcd_election_timeout_s: float
    controller_lease_duration_s: float
    controller_retry_period_s: float
    source: str = ""

    @classmethod
    def of(cls, timings: Timings, controller: ControllerSettings, *,
           source: str = "") -> StatedTimings:
        """From a cluster's ``Timings`` and the controller settings under test."""
        return cls(timings.node_monitor_period_s, timings.node_monitor_grace_period_s,
                   float(timings.node_lease_duration_s), timings.etcd_election_timeout_s,
                   float(controller.lease_duration_s), controller.retry_period_s, source)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the journal)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Bound:
    """How many seconds after its injection an effect must show, and why."""

    seconds: float
    derivation: str


def bounds(t: StatedTimings) -> dict[Effect, Bound]:
    """The bound of every effect under ``t`` (see each derivation)."""
    def bound(seconds: float, why: str) -> Bound:
        return Bound(round(seconds + MARGIN_S, 3), f"{why} + margin {MARGIN_S:g} s")

    election = 2 * t.etcd_election_timeout_s
    health_poll = (f"a health poll of every member (on kind through docker exec: first seen "
                   f"6.2-8.3 s after the kill) {HEALTH_POLL_S:g} s")
    failover = ControllerSettings(  # the one derivation, the conformance suite's too
        (), lease_duration_s=int(t.controller_lease_duration_s),
        retry_period_s=t.controller_retry_period_s).takeover_after_kill()
    return {
        Effect.KUBELETS_STOPPED: bound(
            t.node_lease_duration_s, f"node-lease duration {t.node_lease_duration_s:g} s"),
        Effect.NODES_NOT_READY: bound(
            t.node_monitor_grace_period_s + t.node_monitor_period_s + MARGIN_S,
            f"node-monitor-grace-period {t.node_monitor_grace_period_s:g} s + "
            f"node-monitor-period {t.node_monitor_period_s:g} s + load {MARGIN_S:g} s"),
        Effect.ETCD_MEMBERS_DOWN: bound(
            HEALTH_POLL_S, f"a SIGKILLed member is gone at once, seen by {health_poll}"),
        Effect.ETCD_LEADER_CHANGED: bound(
            election, f"2 x etcd election timeout {t.etcd_election_timeout_s:g} s (a "
                      "randomized timeout, then one election)"),
        Effect.ETCD_QUORUM_LOST: bound(  # seen by the same poll as the members: never sooner
            election + HEALTH_POLL_S,
            f"2 x etcd election timeout {t.etcd_election_timeout_s:g} s (the leader steps down "
            f"once it hears no quorum), seen by {health_poll}"),
        Effect.CONTROL_PLANE_DOWN: bound(0.0, "a SIGKILLed process is gone at once"),
        Effect.CONTROLLER_LEADER_LOST: bound(failover.seconds, f"controller {failover.derivation} "
                                             "(a standby takes the unrenewed Lease over)"),
        Effect.WEBHOOK_DOWN: bound(API_WRITE_S, f"the next admission attempt {API_WRITE_S:g} s"),
        Effect.NODES_CORDONED: bound(API_WRITE_S, f"an API write {API_WRITE_S:g} s"),
        Effect.NODES_DRAINED: bound(DRAIN_BUDGET_S,
                                    f"drain-zone's eviction budget {DRAIN_BUDGET_S:g} s"),
        Effect.LINKS_SLOWED: bound(LINK_PROBE_S, f"a probe of every link {LINK_PROBE_S:g} s"),
        Effect.NAMES_UNRESOLVED: bound(RESOLVER_PROBE_S, f"a failed readiness probe of every "
                                       f"resolver pod, written {RESOLVER_PROBE_S:g} s"),
    }
