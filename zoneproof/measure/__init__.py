"""Measurement: recorders append timestamped events to one Timeline. Records, never judges.

Belongs here: watch-based recorders (node readiness, kubelet heartbeats, pods, lease
holders and renewals) and polled health (etcd members and leader, API server, control-plane
processes), the Timeline they share, its JSON form, the recorded
register history of the traffic's clients (``history``), the Lease history model
(``lease``: windows of ability, overlaps, hand-overs), the audited pod deletes and Lease
requests (``audit``: who tried for the Lease, how often) and pure attribution of audited
deletes to Lease tenures. Not here:
thresholds and verdicts (slo), injecting faults (cluster, faults).
"""

from zoneproof.measure.attribution import (
    UnfencedDelete,
    deletes_not_after_own_lease_write,
    unfenced_deletes,
)
from zoneproof.measure.audit import (
    LeaseRequest,
    PodDeletion,
    attempts_after_seen_renewal,
    attempts_by,
    lease_requests,
    lease_writes,
    pod_deletions,
)
from zoneproof.measure.history import History, Operation, OpKind, Outcome, ReadMode
from zoneproof.measure.lease import LeaseHistory, LeaseObservation, observations
from zoneproof.measure.recorders import (
    CONTROL_PLANE_LEASES,
    ControlPlaneLeaseRecorder,
    HealthRecorder,
    LeaseRecorder,
    LinkRecorder,
    NodeHeartbeatRecorder,
    NodeReadyRecorder,
    PodRecorder,
    Recorder,
    recording,
)
from zoneproof.measure.timeline import Event, Timeline

__all__ = [
    "CONTROL_PLANE_LEASES",
    "ControlPlaneLeaseRecorder",
    "Event",
    "HealthRecorder",
    "History",
    "LeaseHistory",
    "LeaseObservation",
    "LeaseRecorder",
    "LeaseRequest",
    "LinkRecorder",
    "NodeHeartbeatRecorder",
    "NodeReadyRecorder",
    "OpKind",
    "Operation",
    "Outcome",
    "PodDeletion",
    "PodRecorder",
    "ReadMode",
    "Recorder",
    "Timeline",
    "UnfencedDelete",
    "attempts_after_seen_renewal",
    "attempts_by",
    "deletes_not_after_own_lease_write",
    "lease_requests",
    "lease_writes",
    "observations",
    "pod_deletions",
    "recording",
    "unfenced_deletes",
]
