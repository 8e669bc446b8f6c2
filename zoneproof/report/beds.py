"""What a bed knew, kept before it goes down: ``<reports>/beds/<name>/``.

- ``logs/``: its control plane's logs (a local bed's every process; a kind cluster's
  ``kind export logs``), where the bed can give them (``SavesLogs``);
- ``events.json``: the cluster's Events, every namespace, oldest first;
- ``audit.log``: the API server's audit log, where it is readable;
- ``bed.json``: which bed, its role in the run, what was saved and what could not be, and why.

Saving never fails the teardown it runs in: a part that cannot be read is recorded as such.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof._util import kube
from zoneproof.cluster.interface import Cluster, Progress, SavesLogs

__all__ = ["BEDS", "EVENTS", "save"]

BEDS = "beds"
EVENTS = "events.json"
_AUDIT = "audit.log"
_LOGS = "logs"


def _events(cluster: Cluster) -> list[dict[str, Any]]:
    api = kube.teardown_client(cluster.kubeconfig)
    try:
        listed = client.CoreV1Api(api).list_event_for_all_namespaces()
        rows: list[dict[str, Any]] = api.sanitize_for_serialization(listed.items)
    finally:
        api.close()

    def when(event: dict[str, Any]) -> str:
        return str(event.get("lastTimestamp") or event.get("eventTime")
                   or event.get("metadata", {}).get("creationTimestamp") or "")

    return sorted(rows, key=when)


def save(cluster: Cluster, report_dir: Path, *, role: str, progress: Progress) -> Path:
    """Keep ``cluster``'s logs, Events and audit log under ``<report_dir>/beds/<name>/``."""
    where = report_dir / BEDS / cluster.name
    where.mkdir(parents=True, exist_ok=True)
    saved: dict[str, Any] = {}
    missing: dict[str, str] = {}
    try:
        events = _events(cluster)
        (where / EVENTS).write_text(json.dumps(events, indent=1, default=str) + "\n")
        saved["events"] = len(events)
    except Exception as exc:  # a report, not a verdict: record why and go on
        missing["events"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    try:
        audit = cluster.audit_log()
        if audit is None or not audit.is_file():
            missing["audit log"] = "the bed's API server audit log is not readable by zoneproof"
        else:
            shutil.copyfile(audit, where / _AUDIT)
            saved["audit log"] = audit.stat().st_size
    except Exception as exc:
        missing["audit log"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    if isinstance(cluster, SavesLogs):
        try:
            saved["logs"] = len(cluster.save_logs(where / _LOGS))
        except Exception as exc:
            missing["logs"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    else:
        missing["logs"] = (f"the {cluster.backend} backend's control plane is not zoneproof's "
                           "to read (a cluster it did not make)")
    (where / "bed.json").write_text(json.dumps(
        {"name": cluster.name, "backend": cluster.backend, "role": role, "saved": saved,
         "not_saved": missing}, indent=1) + "\n")
    progress(f"kept bed {cluster.name!r} ({role}): "
             + ", ".join(f"{k} {v}" for k, v in saved.items())
             + "".join(f"; no {k}: {why}" for k, why in missing.items()) + f" in {where}")
    return where
