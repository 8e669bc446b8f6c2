"""Pod deletions as the API server audited them: who deleted which pod, when, with what result.

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

__all__ = ["POD_NAME_EXTRA", "LeaseWrite", "PodDeletion", "actor", "lease_writes",
           "pod_deletions"]

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
class LeaseWrite:
    """One audited, successful write (create, update, patch) of a Lease."""

    at: dt.datetime
    """When the API server received it (its own clock, like a PodDeletion's)."""
    user: str
    verb: str
    code: int


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


def lease_writes(audit_log: Path, *, namespace: str, name: str,
                 users_prefix: str = "") -> list[LeaseWrite]:
    """Every successful (2xx) write of Lease ``namespace/name`` by a user starting with
    ``users_prefix``, in the order the API server received them (a create may be audited
    without a name: it counts when the namespace matches)."""
    found: list[LeaseWrite] = []
    for event in _events(audit_log):
        ref = event.get("objectRef") or {}
        user, _ = actor(event.get("user") or {})
        code = int((event.get("responseStatus") or {}).get("code", 0))
        if (event.get("stage") == "ResponseComplete" and ref.get("resource") == "leases"
                and event.get("verb") in ("create", "update", "patch")
                and ref.get("namespace") == namespace and ref.get("name", name) in (name, "")
                and user.startswith(users_prefix) and 200 <= code < 300):
            found.append(LeaseWrite(_received(event), user, str(event["verb"]), code))
    return sorted(found, key=lambda w: w.at)


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
