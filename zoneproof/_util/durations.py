"""Durations as people write them: ``30s``, ``5m``, ``1m30s``, ``250ms``, ``1h``; a bare number is
seconds."""

from __future__ import annotations

import re

from zoneproof import errors

__all__ = ["parse_seconds"]

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_seconds(text: str) -> float:
    """Seconds of ``text``; ConfigError naming the accepted forms."""
    value = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        return float(value)
    parts = _PART.findall(value)
    if not value or "".join(number + unit for number, unit in parts) != value:
        raise errors.ConfigError(f"{text!r} is not a duration: write seconds (30, 2.5) or a "
                                 "number with a unit, ms, s, m or h (30s, 5m, 1m30s, 250ms)")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)
