"""Timeline: one monotonic origin, queries, JSON round trip."""

import datetime as dt
import itertools
from pathlib import Path

from zoneproof.measure import Timeline


def _timeline() -> Timeline:
    ticks = itertools.count(100.0, 0.5)
    return Timeline(clock=lambda: next(ticks),
                    wall_clock=lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


def test_events_are_measured_from_the_timeline_start() -> None:
    timeline = _timeline()
    first = timeline.add("node_ready", "n1", status="False")
    second = timeline.add("node_ready", "n1", status="True")
    assert (first.t, second.t) == (0.5, 1.0)


def test_select_and_first_filter_by_kind_subject_detail_and_time() -> None:
    timeline = _timeline()
    timeline.add("node_ready", "n1", status="False")
    timeline.add("pod_deleted", "ns/p", node="n1")
    timeline.add("node_ready", "n1", status="True")
    assert [e.detail["status"] for e in timeline.select("node_ready", "n1")] == ["False", "True"]
    assert timeline.first("node_ready", status="True").t == 1.5  # type: ignore[union-attr]
    assert timeline.first("pod_deleted", after=1.1) is None
    assert timeline.first("pod_deleted", node="n1") is not None


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    timeline = _timeline()
    timeline.add("lease_holder", "ns/l", holder="a", transitions="1")
    timeline.save(tmp_path / "t.json")
    loaded = Timeline.load(tmp_path / "t.json")
    assert loaded.events == timeline.events
    assert loaded.start_wall == timeline.start_wall
