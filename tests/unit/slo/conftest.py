"""Synthetic timelines for the figure, effect and metric tests."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from zoneproof.measure import Timeline

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
Row = tuple[float, str, str, dict[str, str]]


def _timeline_of(rows: list[Row]) -> Timeline:
    rows = sorted(rows, key=lambda r: r[0])
    times = iter([0.0] + [t for t, *_ in rows])
    walls = iter([T0] + [T0 + dt.timedelta(seconds=t) for t, *_ in rows])
    timeline = Timeline(clock=lambda: next(times), wall_clock=lambda: next(walls))
    for _, kind, subject, detail in rows:
        timeline.add(kind, subject, **detail)
    return timeline


@pytest.fixture
def timeline_of() -> Callable[[list[Row]], Timeline]:
    """Rows (t, kind, subject, detail) → a Timeline holding them in time order, wall time
    2026-01-01 + t."""
    return _timeline_of
