"""Pod deletions and Lease requests as the API server audited them: who deleted which pod,
who read or wrote the Lease, when, with what result.

This is the ground truth for attribution ("never two actors"): it does not depend on what
a component under test chooses to log. The actor is the user the request authenticated as,
except a pod acting with its ServiceAccount's token: then the pod (``POD_NAME_EXTRA``), so
the replicas of an in-cluster component, one ServiceAccount, are told apart as their Lease
identities (their pod names) tell them apart.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ATTEMPT_VERBS", "POD_NAME_EXTRA", "WRITE_VERBS", "LeaseRequest",
           "PodDeletion", "actor", "attempts_after_seen_renewal", "attempts_by",
           "lease_requests", "lease_writes", "pod_deletions"]

#: The user extra a ServiceAccount token bound to a pod carries: the pod's name.
POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name"
_SERVICE_ACCOUNT = "system:serviceaccount:"


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

    @property
    def renewed(self) -> bool:
        """A successful (2xx) write: the Lease as its writer left it."""
        return self.verb in WRITE_VERBS and 200 <= self.code < 300


WRITE_VERBS = ("create", "update", "patch")
#: What a candidate does to compete for a Lease: read it (a standby finds it held, and
#: writes nothing), or write it (create, take over, renew, release).
ATTEMPT_VERBS = ("get", *WRITE_VERBS)


def _events(audit_log: Path) -> list[dict[str, Any]]:
    if not audit_log.is_file():
        return []
    found = []
    for line in audit_log.read_text(errors="replace").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line being written right now
    return found


def _received(event: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))


def lease_requests(audit_log: Path, *, namespace: str, name: str, users_prefix: str = "",
                   verbs: tuple[str, ...] = ATTEMPT_VERBS) -> list[LeaseRequest]:
    """Every completed request with one of ``verbs`` on Lease ``namespace/name`` by a user
    starting with ``users_prefix``, whatever its answer (a 404 read or a 409 write is an
    attempt too), in the order the API server received them (a create may be audited
    without a name: it counts when the namespace matches)."""
    found: list[LeaseRequest] = []
    for event in _events(audit_log):
        ref = event.get("objectRef") or {}
        user, _ = actor(event.get("user") or {})
        if (event.get("stage") == "ResponseComplete" and ref.get("resource") == "leases"
                and event.get("verb") in verbs
                and ref.get("namespace") == namespace and ref.get("name", name) in (name, "")
                and user.startswith(users_prefix)):
            code = int((event.get("responseStatus") or {}).get("code", 0))
            found.append(LeaseRequest(_received(event), user, str(event["verb"]), code))
    return sorted(found, key=lambda r: r.at)


def lease_writes(audit_log: Path, *, namespace: str, name: str,
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


def pod_deletions(audit_log: Path, *, users_prefix: str = "") -> list[PodDeletion]:
    """Every completed pod DELETE in ``audit_log`` by a user starting with ``users_prefix``."""
    found: list[PodDeletion] = []
    for event in _events(audit_log):
        ref = event.get("objectRef") or {}
        user, account = actor(event.get("user") or {})
        if (event.get("stage") != "ResponseComplete" or event.get("verb") != "delete"
                or ref.get("resource") != "pods" or not user.startswith(users_prefix)):
            continue
        found.append(PodDeletion(_received(event), user, ref.get("namespace", ""),
                                 ref.get("name", ""),
                                 int((event.get("responseStatus") or {}).get("code", 0)), account))
    return sorted(found, key=lambda d: d.at)
