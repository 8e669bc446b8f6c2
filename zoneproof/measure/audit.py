"""Pod deletions as the API server audited them: who deleted which pod, when, with what result.

This is the ground truth for attribution ("never two actors"): it does not depend on what
a component under test chooses to log.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LeaseWrite", "PodDeletion", "lease_writes", "pod_deletions"]


@dataclass(frozen=True, slots=True)
class PodDeletion:
    """One audited DELETE of a pod."""

    at: dt.datetime
    user: str
    namespace: str
    pod: str
    code: int


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
        user = (event.get("user") or {}).get("username", "")
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
        user = (event.get("user") or {}).get("username", "")
        if (event.get("stage") != "ResponseComplete" or event.get("verb") != "delete"
                or ref.get("resource") != "pods" or not user.startswith(users_prefix)):
            continue
        found.append(PodDeletion(_received(event), user, ref.get("namespace", ""), ref.get("name", ""),
                                 int((event.get("responseStatus") or {}).get("code", 0))))
    return sorted(found, key=lambda d: d.at)
