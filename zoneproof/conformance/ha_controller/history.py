"""One schedule's history as the API server recorded it: the model's only input.

Every step is one audited request (``zoneproof.measure.audit``): the executor's writes of
nodes, pods and markers, anyone's pod deletes and Lease writes, the replicas' Lease reads.
Each carries its place in the API server's order (``ApiOrder``: the revision it wrote,
its received and completed stamps) and what it left: a node's Ready status and taints, a
pod's node, labels and phase, the Lease's holder. Nothing comes from a watcher or from a
client's clock; process events (a replica started, signalled, exited) are marker writes
the executor makes around them, so they too have a place in that order.

``History.load``/``save`` keep a history as JSON (``tests/data/controller-histories``):
the checker is judged on saved histories without a bed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from zoneproof import errors
from zoneproof.conformance.ha_controller import casefile
from zoneproof.measure.audit import ApiOrder, AuditRecord

__all__ = ["FENCE_TAINTS", "MARKER_ANNOTATION", "History", "NodeView", "PodView", "Scope",
           "Step", "from_records"]

READY = "True"
#: kube-controller-manager's fence: the scheduler places no ordinary pod on such a node.
FENCE_TAINTS = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})
_FENCE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
#: The annotation of the executor's marker ConfigMap that names a process event.
MARKER_ANNOTATION = "zoneproof.dev/marker"


@dataclass(frozen=True, slots=True)
class NodeView:
    """A node as a write left it (``exists`` False: deleted)."""

    name: str
    ready: str = ""
    """Its Ready condition's status ('True', 'False', 'Unknown'); '' when it has none (a
    node that never reported)."""
    fenced: bool = False
    """kcm's not-ready/unreachable taint (NoSchedule or NoExecute) is on."""
    unschedulable: bool = False
    taints: tuple[str, ...] = ()
    zone: str = ""
    exists: bool = True

    @property
    def not_ready(self) -> bool:
        """Not ready as seed 001 defines it: no Ready condition that is True."""
        return self.exists and self.ready != READY


@dataclass(frozen=True, slots=True)
class PodView:
    """A pod as a write left it (``exists`` False: removed)."""

    namespace: str
    name: str
    uid: str
    node: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    phase: str = "Pending"
    terminating: bool = False
    exists: bool = True

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def label_map(self) -> dict[str, str]:
        """Its labels as a dict."""
        return dict(self.labels)


@dataclass(frozen=True, slots=True)
class Step:
    """One audited request in the schedule's scope.

    ``kind``: ``node`` (a node write), ``pod`` (a pod create or status/update write),
    ``delete`` (a pod DELETE, anyone's), ``lease`` (a Lease write, anyone's), ``attempt``
    (a replica's Lease read or failed write), ``marker`` (the executor's process event).
    """

    order: ApiOrder
    actor: str
    kind: str
    code: int = 200
    node: NodeView | None = None
    pod: PodView | None = None
    """``pod``: the pod as written; ``delete``: the pod as the delete left it (its uid, node,
    labels; ``exists`` False once removed), None when the answer holds no pod."""
    target: str = ""
    """``delete``: the ``namespace/name`` asked for."""
    grace: int | None = None
    """``delete``: the grace period asked for (query or body); None: none asked (the pod's
    own, i.e. not a force delete)."""
    grace_known: bool = True
    """``delete``: the record holds the request (a Metadata-level record does not)."""
    uid_precondition: str = ""
    holder: str | None = None
    """``lease``: the holder it left ('' free); None unknown."""
    duration_s: float | None = None
    renewed_at: dt.datetime | None = None
    """``lease``: the renewTime the writer put in it (the Lease's own statement of when it
    was renewed: a taker may count its duration from there)."""
    marker: str = ""
    """``marker``: ``<event> <identity> [exit code]``, e.g. ``sigstop zp-hac-m0-1``."""

    @property
    def succeeded(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.code < 300

    @property
    def marker_event(self) -> tuple[str, str, int | None]:
        """(event, identity, code) of a marker."""
        parts = self.marker.split()
        code = int(parts[2]) if len(parts) > 2 and parts[2].lstrip("-").isdigit() else None
        return (parts[0] if parts else "", parts[1] if len(parts) > 1 else "", code)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data = asdict(self)
        data["order"] = {"received": self.order.received.isoformat(),
                         "completed": self.order.completed.isoformat(),
                         "revision": self.order.revision}
        data["renewed_at"] = self.renewed_at.isoformat() if self.renewed_at else None
        return {k: v for k, v in data.items() if v not in (None, "", (), []) or k == "holder"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        """The step ``to_dict`` wrote."""
        order = data["order"]
        node = data.get("node")
        pod = data.get("pod")
        return cls(
            ApiOrder(dt.datetime.fromisoformat(order["received"]),
                     dt.datetime.fromisoformat(order["completed"]), order.get("revision")),
            data["actor"], data["kind"], int(data.get("code", 200)),
            NodeView(**{**node, "taints": tuple(node.get("taints", ()))}) if node else None,
            PodView(**{**pod, "labels": tuple(tuple(p) for p in pod.get("labels", ()))})
            if pod else None,
            data.get("target", ""), data.get("grace"), bool(data.get("grace_known", True)),
            data.get("uid_precondition", ""), data.get("holder"), data.get("duration_s"),
            _datetime(data.get("renewed_at")), data.get("marker", ""))


def _datetime(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class Scope:
    """What one schedule owns: its nodes, namespaces (watched or not), Lease, replicas,
    executor and marker ConfigMap (``namespace/name``)."""

    nodes: frozenset[str]
    namespaces: frozenset[str]
    lease_namespace: str
    lease_name: str
    replica_prefix: str
    executor: str
    marker: str


def _taints(node: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(f"{t.get('key', '')}:{t.get('effect', '')}"
                        for t in (node.get("spec") or {}).get("taints") or ()))


def node_view(obj: dict[str, Any]) -> NodeView:
    """A NodeView of a Node object (as JSON)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    ready = next((str(c.get("status", "")) for c in (obj.get("status") or {}).get("conditions")
                  or () if c.get("type") == "Ready"), "")
    fenced = any(t.get("key") in FENCE_TAINTS and t.get("effect") in _FENCE_EFFECTS
                 for t in spec.get("taints") or ())
    return NodeView(str(meta.get("name", "")), ready, fenced, bool(spec.get("unschedulable")),
                    _taints(obj), str((meta.get("labels") or {}).get(
                        "topology.kubernetes.io/zone", "")))


def pod_view(obj: dict[str, Any], *, exists: bool = True) -> PodView:
    """A PodView of a Pod object (as JSON)."""
    meta = obj.get("metadata") or {}
    return PodView(str(meta.get("namespace", "")), str(meta.get("name", "")),
                   str(meta.get("uid", "")), str((obj.get("spec") or {}).get("nodeName") or ""),
                   tuple(sorted((meta.get("labels") or {}).items())),
                   str((obj.get("status") or {}).get("phase") or "Pending"),
                   meta.get("deletionTimestamp") is not None, exists)


def _grace(record: AuditRecord) -> tuple[int | None, bool, str]:
    """(grace asked, whether the record could say, uid precondition) of a DELETE."""
    query = parse_qs(urlsplit(record.uri).query)
    body = record.request or {}
    grace: int | None = None
    if "gracePeriodSeconds" in query:
        grace = int(query["gracePeriodSeconds"][0])
    if body.get("gracePeriodSeconds") is not None:
        grace = int(body["gracePeriodSeconds"])
    uid = str((body.get("preconditions") or {}).get("uid") or "")
    # The API server logs the DeleteOptions as it decodes a body; a DELETE without a body
    # logs none, and its absence says "no grace asked". A request refused before its body was
    # read (an API server answering 5xx or 429 while etcd is down, the handler timed out)
    # logs none either: there its absence says nothing.
    unread = record.request is None and (record.code >= 500 or record.code == 429)
    known = "gracePeriodSeconds" in query or (
        record.level in ("Request", "RequestResponse") and not unread)
    return grace, known, uid


def _delete_step(record: AuditRecord) -> Step:
    grace, known, uid = _grace(record)
    pod = None
    response = record.response or {}
    if record.succeeded and response.get("kind") == "Pod":
        seen = pod_view(response)
        # removed at once unless the API server kept it to be deleted gracefully: then the
        # pod it answers with carries a grace period left (a terminal pod, or grace 0
        # asked, is removed whatever was asked; a finalizer would keep it, none is used)
        left = (response.get("metadata") or {}).get("deletionGracePeriodSeconds")
        removed = not seen.terminating or left == 0
        pod = replace(seen, exists=not removed, terminating=seen.terminating and not removed)
    return Step(record.order, record.user, "delete", record.code, pod=pod,
                target=f"{record.namespace}/{record.name}", grace=grace, grace_known=known,
                uid_precondition=uid)


def _step(record: AuditRecord, scope: Scope) -> Step | None:
    """The step of ``record`` if it is in ``scope``."""
    response = record.response or {}
    writes = record.verb in ("create", "update", "patch")
    if record.resource == "nodes" and writes and record.succeeded:
        node = node_view(response)
        return Step(record.order, record.user, "node", record.code, node=node) \
            if node.name in scope.nodes else None
    if record.resource == "nodes" and record.verb == "delete" and not record.subresource \
            and record.succeeded and record.name in scope.nodes:
        return Step(record.order, record.user, "node", record.code,
                    node=NodeView(record.name, exists=False))
    if record.resource == "pods" and record.verb == "delete" and not record.subresource:
        if record.namespace in scope.namespaces or record.user.startswith(scope.replica_prefix):
            return _delete_step(record)
        return None
    if record.resource == "pods" and writes and record.succeeded \
            and record.namespace in scope.namespaces and response.get("kind") == "Pod":
        return Step(record.order, record.user, "pod", record.code, pod=pod_view(response))
    if record.resource == "leases" and record.namespace == scope.lease_namespace \
            and record.name in (scope.lease_name, ""):
        if writes and record.succeeded:
            spec = response.get("spec") or {}
            if record.name == "" and (response.get("metadata") or {}).get("name") \
                    != scope.lease_name:
                return None
            duration = spec.get("leaseDurationSeconds")
            holder = str(spec.get("holderIdentity") or "") if response else None
            return Step(record.order, record.user, "lease", record.code, holder=holder,
                        duration_s=float(duration) if duration else None,
                        renewed_at=_datetime(spec.get("renewTime")))
        if record.user.startswith(scope.replica_prefix) and (record.verb == "get" or writes):
            return Step(record.order, record.user, "attempt", record.code)
        return None
    if record.resource == "configmaps" and writes and record.succeeded \
            and f"{record.namespace}/{record.name}" == scope.marker \
            and record.user == scope.executor:
        text = ((response.get("metadata") or {}).get("annotations") or {}).get(
            MARKER_ANNOTATION, "")
        return Step(record.order, record.user, "marker", record.code, marker=str(text))
    return None


def _without_stale_revisions(steps: list[Step]) -> list[Step]:
    """``steps`` with the revision dropped from each write that wrote nothing: a no-op
    update or patch (a node's taint removed again) answers with the object's unchanged
    resourceVersion, a revision no later than one a write completed before it was
    received already had. Kept, it would place the request back at that old revision,
    and every read received before it completed with it (a take-over seen seconds late)."""
    by_completion = sorted((s for s in steps if s.order.revision is not None),
                           key=lambda s: s.order.completed)
    latest, index, stale = -1, 0, set()
    for step in sorted(by_completion, key=lambda s: s.order.received):
        while index < len(by_completion) and \
                by_completion[index].order.completed < step.order.received:
            latest = max(latest, by_completion[index].order.revision or -1)
            index += 1
        if step.order.revision is not None and step.order.revision <= latest:
            stale.add(id(step))
    return [replace(s, order=replace(s.order, revision=None)) if id(s) in stale else s
            for s in steps]


def _sorted(steps: Iterable[Step]) -> list[Step]:
    """Steps in the API server's order: writes by revision; a request that wrote nothing
    (a read, a failed request, a no-op write) after the last write that completed before
    it was received (its exact place among overlapping writes is not known: the checker
    asks ``before``)."""
    steps = _without_stale_revisions(list(steps))
    writes = sorted((s for s in steps if s.order.revision is not None),
                    key=lambda s: (s.order.revision, s.order.completed))
    others = sorted((s for s in steps if s.order.revision is None),
                    key=lambda s: s.order.received)
    merged: list[Step] = []
    index = 0
    for step in others:
        while index < len(writes) and writes[index].order.completed < step.order.received:
            merged.append(writes[index])
            index += 1
        merged.append(step)
    return merged + writes[index:]


@dataclass(frozen=True, slots=True)
class History(casefile.CaseFile):
    """The steps of one schedule, in the API server's order, and what the checker needs to
    know about it that no request says (the setup is the model's, not the record's)."""

    WHAT: ClassVar[str] = "controller history"

    steps: tuple[Step, ...]
    notes: dict[str, Any] = field(default_factory=dict)
    """Free-form facts for reports (the schedule, the seed, the component)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"notes": self.notes, "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> History:
        """The history ``to_dict`` wrote."""
        try:
            return cls(tuple(_sorted(Step.from_dict(s) for s in data["steps"])),
                       dict(data.get("notes") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise errors.ConfigError(f"malformed controller history: {exc}") from exc


def from_records(records: Sequence[AuditRecord], scope: Scope,
                 notes: dict[str, Any] | None = None) -> History:
    """The history of ``scope`` in ``records`` (a shared audit log holds other schedules
    too)."""
    steps = [s for r in records if (s := _step(r, scope)) is not None]
    return History(tuple(_sorted(steps)), dict(notes or {}))
