"""Structured log lines: ``emit`` attaches fields to a record, JsonFormatter prints JSON.

The library only emits; the process (``cli``) installs the formatter. Each line is one
JSON object: ``ts`` (UTC, RFC 3339, ms), ``level``, ``logger``, ``event``, ``msg``, then
the event's fields (e.g. node, namespace, pod, identity, lease_transitions).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

__all__ = ["JsonFormatter", "emit"]


def emit(logger: logging.Logger, level: int, event: str, /, **fields: object) -> None:
    """Log ``event`` with ``fields`` (kept on the record as ``event`` and ``fields``)."""
    text = " ".join(f"{k}={v}" for k, v in fields.items())
    logger.log(level, "%s %s", event, text, extra={"event": event, "fields": fields})


class JsonFormatter(logging.Formatter):
    """One JSON object per record; fields from ``emit`` become top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line."""
        ts = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        payload: dict[str, object] = {
            "ts": ts.replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "event": getattr(record, "event", None),
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            payload.update(fields)
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)
