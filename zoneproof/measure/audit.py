"""Requests as the API server audited them: who deleted which pod, who read or wrote the
Lease, when, with what result, and where each sits in the API server's own order.

This is the ground truth for attribution ("never two actors"): it does not depend on what
a component under test chooses to log. The actor is the user the request authenticated as,
except a pod acting with its ServiceAccount's token: then the pod (``POD_NAME_EXTRA``), so
the replicas of an in-cluster component, one ServiceAccount, are told apart as their Lease
identities (their pod names) tell them apart.

Order (``ApiOrder``): every audited request carries the API server's own clock twice, when
it received the request and when it completed it (the ResponseComplete stage), and, where
the policy records the response, the resourceVersion of what it wrote: the etcd revision
of the commit, one counter for every object of the cluster. Two writes are ordered by
revision; otherwise a request that completed before another was received came first; two
requests whose spans overlap cannot be ordered (``before`` says None, never a guess). No
client's clock and no watcher's receive time enters.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ATTEMPT_VERBS", "POD_NAME_EXTRA", "WRITE_VERBS", "ApiOrder", "AuditRecord",
           "LeaseRequest", "PodDeletion", "actor", "attempts_after_seen_renewal",
           "attempts_by", "lease_requests", "lease_writes", "pod_deletions", "read_records"]

#: The user extra a ServiceAccount token bound to a pod carries: the pod's name.
POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name"
_SERVICE_ACCOUNT = "system:serviceaccount:"


@dataclass(frozen=True, slots=True)
class ApiOrder:
    """Where a request sits in the API server's own order: its clock when it received and
    when it completed the request, and the revision (resourceVersion) it wrote, when the
    audit record holds the response object."""

    received: dt.datetime
    completed: dt.datetime
    revision: int | None = None

    def before(self, other: ApiOrder) -> bool | None:
        """True if this request took effect before ``other``, False if after (or at the same
        revision), None if the API server's record cannot say: two writes compare by
        revision, anything else by its span (a request completed before the other was
        received came first)."""
        if self.revision is not None and other.revision is not None:
            return self.revision < other.revision
        if self.completed < other.received:
            return True
        if other.completed <= self.received:
            return False
        return None


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One completed request (the ResponseComplete stage) as the audit log holds it."""

    order: ApiOrder
    user: str
    verb: str
    resource: str
    namespace: str
    name: str
    code: int
    subresource: str = ""
    account: str = ""
    """The ServiceAccount (``system:serviceaccount:NS:NAME``) when ``user`` is its pod."""
    level: str = "Metadata"
    uri: str = ""
    request: dict[str, Any] | None = field(default=None, compare=False)
    response: dict[str, Any] | None = field(default=None, compare=False)
    line: int = 0
    """Line number in the log (display only: the log's order is not the API server's)."""

    @property
    def succeeded(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.code < 300


@dataclass(frozen=True, slots=True)
class PodDeletion:
    """One audited DELETE of a pod."""

    at: dt.datetime
    user: str
    namespace: str
    pod: str
    code: int
    account: str = ""
    """The ServiceAccount (``system:serviceaccount:NS:NAME``) when ``user`` is its pod."""
    order: ApiOrder | None = None
    """Its place in the API server's order (None: built by hand without one)."""

    @property
    def where(self) -> ApiOrder:
        """Its place in the API server's order (its received time when nothing more is known)."""
        return self.order or ApiOrder(self.at, self.at)


def actor(user: dict[str, object]) -> tuple[str, str]:
    """(actor, ServiceAccount) of an audit event's ``user``: a pod acting with its
    ServiceAccount is that pod; anyone else is its user name (no ServiceAccount)."""
    name = str(user.get("username", ""))
    extra = user.get("extra")
    pods = extra.get(POD_NAME_EXTRA) if isinstance(extra, dict) else None
    if name.startswith(_SERVICE_ACCOUNT) and isinstance(pods, list) and pods:
        return str(pods[0]), name
    return name, ""


@dataclass(frozen=True, slots=True)
class LeaseRequest:
    """One audited, completed request on a Lease (a read or a write), whatever its answer."""

    at: dt.datetime
    """When the API server received it (its own clock, like a PodDeletion's)."""
    user: str
    verb: str
    code: int
    order: ApiOrder | None = None
    holder: str | None = None
    """holderIdentity of the Lease as this request left or read it ('' free); None when
    the audit record has no response object (a Metadata-level policy)."""
    duration_s: float | None = None
    """leaseDurationSeconds as this request left or read it (None: unknown)."""
    renewed_at: dt.datetime | None = None
    """renewTime as the writer put it (the Lease's own statement; None: unknown)."""

    @property
    def renewed(self) -> bool:
        """A successful (2xx) write: the Lease as its writer left it."""
        return self.verb in WRITE_VERBS and 200 <= self.code < 300

    @property
    def where(self) -> ApiOrder:
        """Its place in the API server's order (its received time when nothing more is known)."""
        return self.order or ApiOrder(self.at, self.at)

    @property
    def holder_after(self) -> str:
        """Who holds the Lease after this write: the response's holder, else its writer (a
        Metadata-level record cannot tell a release from a renewal)."""
        return self.user if self.holder is None else self.holder


WRITE_VERBS = ("create", "update", "patch")
#: What a candidate does to compete for a Lease: read it (a standby finds it held, and
#: writes nothing), or write it (create, take over, renew, release).
ATTEMPT_VERBS = ("get", *WRITE_VERBS)


_WRITES = ("create", "update", "patch", "delete")


def _time(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def _revision(verb: str, response: dict[str, Any] | None) -> int | None:
    """The revision a write left: its response object's resourceVersion (a read's is the
    object's last write, not the read's place; a Status has none)."""
    if (verb not in _WRITES or not isinstance(response, dict)
            or response.get("kind") == "Status"):
        return None
    version = (response.get("metadata") or {}).get("resourceVersion")
    return int(version) if isinstance(version, str) and version.isdigit() else None


def _record(event: dict[str, Any], line: int) -> AuditRecord | None:
    if event.get("stage") != "ResponseComplete":
        return None
    received = _time(event.get("requestReceivedTimestamp"))
    if received is None:
        return None
    completed = _time(event.get("stageTimestamp")) or received
    ref = event.get("objectRef") or {}
    user, account = actor(event.get("user") or {})
    response = event.get("responseObject")
    request = event.get("requestObject")
    verb = str(event.get("verb", ""))
    return AuditRecord(
        ApiOrder(received, completed, _revision(verb, response)), user, verb,
        str(ref.get("resource", "")), str(ref.get("namespace", "")), str(ref.get("name", "")),
        int((event.get("responseStatus") or {}).get("code", 0)),
        subresource=str(ref.get("subresource", "")), account=account,
        level=str(event.get("level", "Metadata")), uri=str(event.get("requestURI", "")),
        request=request if isinstance(request, dict) else None,
        response=response if isinstance(response, dict) else None, line=line)


def read_records(audit_log: Path, *, offset: int = 0) -> tuple[list[AuditRecord], int]:
    """The completed requests of ``audit_log`` from byte ``offset``, and the offset after
    the last whole line read (read on from there; a line being written waits)."""
    if not audit_log.is_file():
        return [], offset
    with audit_log.open("rb") as stream:
        stream.seek(offset)
        data = stream.read()
    end = data.rfind(b"\n") + 1
    found = []
    for number, raw in enumerate(data[:end].splitlines()):
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and (record := _record(event, number)) is not None:
            found.append(record)
    return found, offset + end


def _records(source: Path | Iterable[AuditRecord]) -> Iterable[AuditRecord]:
    return read_records(source)[0] if isinstance(source, Path) else source


def _lease_spec(record: AuditRecord) -> tuple[str | None, float | None, dt.datetime | None]:
    spec = (record.response or {}).get("spec") if record.response else None
    if not isinstance(spec, dict):
        return None, None, None
    duration = spec.get("leaseDurationSeconds")
    return (str(spec.get("holderIdentity") or ""), float(duration) if duration else None,
            _time(spec.get("renewTime")))


def lease_requests(audit_log: Path | Iterable[AuditRecord], *, namespace: str, name: str,
                   users_prefix: str = "", verbs: tuple[str, ...] = ATTEMPT_VERBS
                   ) -> list[LeaseRequest]:
    """Every completed request with one of ``verbs`` on Lease ``namespace/name`` by a user
    starting with ``users_prefix``, whatever its answer (a 404 read or a 409 write is an
    attempt too), in the API server's order (a create may be audited without a name: it
    counts when the namespace matches)."""
    found: list[LeaseRequest] = []
    for record in _records(audit_log):
        if (record.resource == "leases" and record.verb in verbs
                and record.namespace == namespace and record.name in (name, "")
                and record.user.startswith(users_prefix)):
            holder, duration, renewed = _lease_spec(record)
            found.append(LeaseRequest(record.order.received, record.user, record.verb,
                                      record.code, record.order, holder, duration, renewed))
    return sorted(found, key=lambda r: r.at)


def lease_writes(audit_log: Path | Iterable[AuditRecord], *, namespace: str, name: str,
                 users_prefix: str = "") -> list[LeaseRequest]:
    """Every successful (2xx) write of Lease ``namespace/name`` by a user starting with
    ``users_prefix``, in the order the API server received them."""
    return [r for r in lease_requests(audit_log, namespace=namespace, name=name,
                                      users_prefix=users_prefix, verbs=WRITE_VERBS)
            if r.renewed]


def attempts_by(requests: list[LeaseRequest], users: list[str]) -> dict[str, int]:
    """How many of ``requests`` each of ``users`` made (0 for one that made none)."""
    return {user: sum(r.user == user for r in requests) for user in users}


def attempts_after_seen_renewal(requests: list[LeaseRequest], *, standby: str,
                                leader: str) -> int:
    """How many attempts ``standby`` made after the first one at which it could have seen
    ``leader`` renew the Lease (a successful write by ``leader`` received between two of
    ``standby``'s attempts), in the audit log's order. A standby that stops trying once it
    has seen a healthy leader makes none; one that keeps trying makes more and more."""
    attempted = renewed_since = seen = False
    after = 0
    for request in sorted(requests, key=lambda r: r.at):
        if request.user == standby:
            if seen:
                after += 1
            elif renewed_since:
                seen = True
            attempted, renewed_since = True, False
        elif request.user == leader and attempted and request.renewed:
            renewed_since = True
    return after


def pod_deletions(audit_log: Path | Iterable[AuditRecord], *, users_prefix: str = ""
                  ) -> list[PodDeletion]:
    """Every completed pod DELETE in ``audit_log`` by a user starting with
    ``users_prefix``, in the order the API server received them."""
    found = [PodDeletion(r.order.received, r.user, r.namespace, r.name, r.code, r.account,
                         r.order)
             for r in _records(audit_log)
             if r.verb == "delete" and r.resource == "pods" and not r.subresource
             and r.user.startswith(users_prefix)]
    return sorted(found, key=lambda d: d.at)
