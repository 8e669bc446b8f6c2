"""What a fault must cause, each effect named with the observation that proves it.

A fault kind declares its effects (``Fault.effects``); its ``FaultRecord`` carries them.
Figures choose the records they are about by effect (``slo.figures``), and the run checks
each declared effect was observed while the fault was on (``slo.effects``): a fault that
did not take effect is never a pass.
"""

from __future__ import annotations

import enum

__all__ = ["OBSERVATIONS", "Effect"]


class Effect(enum.StrEnum):
    """An effect a fault must cause; stable names for reports (``observation`` says how it
    is seen on the run's timeline)."""

    NODES_NOT_READY = "nodes-not-ready"
    ETCD_MEMBERS_DOWN = "etcd-members-down"
    ETCD_QUORUM_LOST = "etcd-quorum-lost"
    CONTROL_PLANE_DOWN = "control-plane-down"
    CONTROLLER_LEADER_LOST = "controller-leader-lost"
    WEBHOOK_DOWN = "webhook-down"
    NODES_CORDONED = "nodes-cordoned"
    NODES_DRAINED = "nodes-drained"

    @property
    def observation(self) -> str:
        """The timeline events that show this effect happened."""
        return OBSERVATIONS[self]


OBSERVATIONS: dict[Effect, str] = {
    Effect.NODES_NOT_READY: "every target Node's Ready condition leaves True through the "
                            "node-lifecycle controller (node_ready status != True)",
    Effect.ETCD_MEMBERS_DOWN: "every target etcd member reports unhealthy "
                              "(etcd_member healthy=False)",
    Effect.ETCD_QUORUM_LOST: "every etcd member reports unhealthy at the same time: raft has no "
                             "leader (etcd_member healthy=False for all)",
    Effect.CONTROL_PLANE_DOWN: "the target process stops answering: kube-apiserver /readyz "
                               "fails (apiserver_ready ready=False), another process is seen "
                               "gone (process_alive alive=False)",
    Effect.CONTROLLER_LEADER_LOST: "the controller Lease is held by someone other than the "
                                   "target replica, or by nobody (lease_holder holder != target)",
    Effect.WEBHOOK_DOWN: "an admission the webhook decides fails (admission_failed)",
    Effect.NODES_CORDONED: "every target Node is unschedulable (node_schedulable "
                           "schedulable=False)",
    Effect.NODES_DRAINED: "every recorded pod on a target Node when the fault began is "
                          "deleted or being deleted (pod_deleting / pod_deleted)",
}
