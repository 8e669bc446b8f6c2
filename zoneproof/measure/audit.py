"""Pod deletions as the API server audited them: who deleted which pod, when, with what result.

This is the ground truth for attribution ("never two actors"): it does not depend on what
a component under test chooses to log.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PodDeletion", "pod_deletions"]


@dataclass(frozen=True, slots=True)
class PodDeletion:
    """One audited DELETE of a pod."""

    at: dt.datetime
    user: str
    namespace: str
    pod: str
    code: int


def pod_deletions(audit_log: Path, *, users_prefix: str = "") -> list[PodDeletion]:
    """Every completed pod DELETE in ``audit_log`` by a user starting with ``users_prefix``."""
    found: list[PodDeletion] = []
    if not audit_log.is_file():
        return found
    for line in audit_log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written right now
        ref = event.get("objectRef") or {}
        user = (event.get("user") or {}).get("username", "")
        if (event.get("stage") != "ResponseComplete" or event.get("verb") != "delete"
                or ref.get("resource") != "pods" or not user.startswith(users_prefix)):
            continue
        at = dt.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))
        found.append(PodDeletion(at, user, ref.get("namespace", ""), ref.get("name", ""),
                                 int((event.get("responseStatus") or {}).get("code", 0))))
    return sorted(found, key=lambda d: d.at)
