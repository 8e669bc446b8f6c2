"""A Timeline: events on one monotonic clock that starts with the timeline, wall time kept."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Event", "Timeline"]


@dataclass(frozen=True, slots=True)
class Event:
    """Something observed: ``kind`` (stable name), ``subject`` (node/pod/lease/member), ``t``
    seconds since the timeline started (monotonic), wall time, and string details."""

    t: float
    wall: str
    kind: str
    subject: str
    detail: dict[str, str] = field(default_factory=dict)


class Timeline:
    """Thread-safe, append-only list of Events measured from one monotonic start."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)) -> None:
        self._clock, self._wall_clock = clock, wall_clock
        self.start_monotonic = clock()
        self.start_wall = wall_clock().isoformat()
        self._events: list[Event] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        """Seconds since the timeline started."""
        return self._clock() - self.start_monotonic

    def add(self, kind: str, subject: str, **detail: str) -> Event:
        """Record an event now."""
        event = Event(self.now(), self._wall_clock().isoformat(), kind, subject, dict(detail))
        with self._lock:
            self._events.append(event)
        return event

    @property
    def events(self) -> list[Event]:
        """A snapshot of every event, in recording order."""
        with self._lock:
            return list(self._events)

    def select(self, kind: str | None = None, subject: str | None = None, *,
               after: float = float("-inf"), **detail: str) -> Iterator[Event]:
        """Events matching ``kind``, ``subject``, detail values, at or after ``after``."""
        for event in self.events:
            if ((kind is None or event.kind == kind)
                    and (subject is None or event.subject == subject) and event.t >= after
                    and all(event.detail.get(k) == v for k, v in detail.items())):
                yield event

    def first(self, kind: str | None = None, subject: str | None = None, *,
              after: float = float("-inf"), **detail: str) -> Event | None:
        """The earliest matching event, or None."""
        return next(self.select(kind, subject, after=after, **detail), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"start_wall": self.start_wall, "events": [asdict(e) for e in self.events]}

    def save(self, path: Path) -> None:
        """Write as JSON."""
        path.write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: Path) -> Timeline:
        """Read a saved timeline (for re-evaluation and plots)."""
        data = json.loads(path.read_text())
        timeline = cls()
        timeline.start_wall = data["start_wall"]
        timeline._events = [Event(**e) for e in data["events"]]
        return timeline
