"""The components a run started, as reports name them: from what the harness noted, never settings.

A test carries each start it caused as a property (``PROPERTY``, the ``Started`` JSON; in
JUnit too); ``section`` folds every test's starts into one entry per distinct component
(same source, executable and digest): what it was, the command template, the argv of its
first start, the resolved executable and its SHA-256, the registration, how often it was
started and by which tests. A kind that was never started says so.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zoneproof.components.harness import kinds
from zoneproof.components.harness.started import Started

__all__ = ["LOGS", "PROPERTY", "keep_logs", "property_of", "section"]

PROPERTY = "zoneproof:started"
LOGS = "components"
"""Directory (in the report directory) of the component logs: ``<test>/<log file name>``."""


def property_of(started: Started) -> tuple[str, str]:
    """The (name, value) a test records for one start."""
    return PROPERTY, json.dumps(started.to_dict(), sort_keys=True)


def section(properties: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Kind → {starts, ran: [...]} from (test nodeid, property value) pairs."""
    groups: dict[str, dict[str, Any]] = {}
    for nodeid, value in properties:
        data = json.loads(value)
        started = Started.from_dict(data)
        key = json.dumps([started.component.to_dict(), started.executable, started.sha256],
                         sort_keys=True)
        group = groups.setdefault(key, {**data, "starts": 0, "tests": []})
        group["starts"] += 1
        if nodeid not in group["tests"]:
            group["tests"].append(nodeid)
    out: dict[str, Any] = {}
    for kind in kinds.every():
        ran = [g for g in groups.values() if g["component"]["kind"] == kind]
        out[str(kind)] = {"starts": sum(g["starts"] for g in ran), "ran": ran}
        if not ran:
            out[str(kind)]["note"] = f"no {kind} was started in this run"
    return out


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:120] or "run"


def keep_logs(properties: Iterable[tuple[str, str]], report_dir: Path) -> list[Path]:
    """Copy the log of every start (test nodeid, property value) to
    ``<report_dir>/components/<test>/<log name>``; the copies (missing logs are skipped)."""
    copied: list[Path] = []
    for nodeid, value in properties:
        log = Started.from_dict(json.loads(value)).log
        source = Path(log) if log else None
        if source is None or not source.is_file():
            continue
        target = report_dir / LOGS / _safe(nodeid) / source.name
        if target in copied:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied.append(target)
    return copied
