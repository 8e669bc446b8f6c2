"""Measurement: recorders append timestamped events to one Timeline. Records, never judges.

Belongs here: watch-based recorders (node readiness, kubelet heartbeats, pods, lease
holders and renewals) and polled health (etcd members and leader, API server, control-plane
processes), the Timeline they share, its JSON form, the recorded
register history of the traffic's clients (``history``), the Lease history model
(``lease``: windows of ability, overlaps, hand-overs), the audited pod deletes and Lease
requests (``audit``: who tried for the Lease, how often, and where each request sits in the API
server's own order) and pure attribution of audited deletes to Lease holders. Not here:
thresholds and verdicts (slo), injecting faults (cluster, faults).
"""

from zoneproof.measure.attribution import (
    UnfencedDelete,
    deletes_by_non_holders,
    early_takeovers,
    holder_at,
)
from zoneproof.measure.audit import (
    ApiOrder,
    AuditRecord,
    LeaseRequest,
    PodDeletion,
    attempts_after_seen_renewal,
    attempts_by,
    lease_requests,
    lease_writes,
    pod_deletions,
    read_records,
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
    PodReadinessRecorder,
    PodRecorder,
    PodRuntimeRecorder,
    Recorder,
    recording,
)
from zoneproof.measure.timeline import Event, Timeline

__all__ = [
    "ApiOrder",
    "AuditRecord",
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
    "PodReadinessRecorder",
    "PodRuntimeRecorder",
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
    "deletes_by_non_holders",
    "early_takeovers",
    "holder_at",
    "lease_requests",
    "lease_writes",
    "observations",
    "pod_deletions",
    "read_records",
    "recording",
]
