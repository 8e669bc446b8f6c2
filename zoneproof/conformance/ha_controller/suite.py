"""The generated controller suite: a seeded batch of schedules run side by side on one
bed within a budget, the first failure shrunk by re-running sub-schedules.

``Budget.default()`` fits the suite in about five minutes on two cores (what ``qualify``
and ``certify`` run); ``Budget.thorough()`` is the nightly setting. A run names its seed;
the same seed and budget draw the same schedules (``generate.draw_batch``).

Shrinking (``shrink``): hypothesis's shrinker would re-run a schedule of seconds hundreds
of times, so the suite shrinks by delta debugging on the bed: drop halves, then quarters,
... then single events, then pods and nodes, then shorten waits, keeping a candidate when
it still breaks the same rule; candidates run side by side in the slots. It stops at a
fixed point or its time budget, and says how long it took and how many runs.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from zoneproof.conformance.ha_controller import generate
from zoneproof.conformance.ha_controller.executor import Outcome
from zoneproof.conformance.ha_controller.schedule import Event, Schedule

__all__ = ["Budget", "Shrunk", "candidates", "run_batch", "shrink"]

Runner = Callable[[Schedule, int], Outcome]
"""Runs a schedule in slot ``i``."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much the generated suite may do."""

    schedules: int
    slots: int
    seconds: float
    """Wall time for the batch: no schedule starts after it (running ones finish)."""
    shrink_seconds: float
    max_events: int = 14
    max_wait_s: float = 24.0

    @classmethod
    def default(cls) -> Budget:
        """About five minutes on two cores, bed and shrinking included."""
        return cls(schedules=40, slots=3, seconds=180.0, shrink_seconds=240.0)

    @classmethod
    def thorough(cls) -> Budget:
        """Nightly: ten times the schedules, longer ones."""
        return cls(schedules=400, slots=3, seconds=2400.0, shrink_seconds=900.0,
                   max_events=20, max_wait_s=40.0)

    def draw(self, run_seed: int) -> list[Schedule]:
        """This budget's batch for ``run_seed``."""
        return generate.draw_batch(self.schedules, run_seed, max_events=self.max_events,
                                   max_seconds=self.max_wait_s)


def run_batch(schedules: list[Schedule], runner: Runner, *, slots: int, seconds: float,
              stop_on_failure: bool = True) -> list[Outcome]:
    """Run ``schedules`` in ``slots`` threads until done, ``seconds`` passed, or (with
    ``stop_on_failure``) one failed; the outcomes in the order they finished."""
    work: queue.Queue[Schedule] = queue.Queue()
    for schedule in schedules:
        work.put(schedule)
    outcomes: list[Outcome] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    failed = threading.Event()

    def worker(slot: int) -> None:
        while time.monotonic() < deadline and not (stop_on_failure and failed.is_set()) \
                and not errors:
            try:
                schedule = work.get_nowait()
            except queue.Empty:
                return
            try:
                outcome = runner(schedule, slot)
            except BaseException as exc:  # noqa: BLE001 — handed to the caller
                with lock:
                    errors.append(exc)
                return
            with lock:
                outcomes.append(outcome)
            if outcome.verdict.violations:
                failed.set()

    threads = [threading.Thread(target=worker, args=(i,), name=f"slot-{i}")
               for i in range(slots)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return outcomes


def candidates(schedule: Schedule) -> Iterator[Schedule]:
    """Smaller schedules, biggest cuts first: halves, quarters... of the events, single
    events, pods, nodes, then shorter waits and simpler settings."""
    events = len(schedule.events)
    chunk = max(1, events // 2)
    while chunk >= 1:
        for start in range(0, events, chunk):
            yield schedule.without(events=range(start, min(events, start + chunk)))
        if chunk == 1:
            break
        chunk //= 2
    for pod in schedule.pods:
        yield schedule.without(pods=[pod.name])
    for node in range(len(schedule.nodes)):
        if len(schedule.nodes) > 1:
            yield schedule.without(nodes=[node])
    for index, event in enumerate(schedule.events):
        shorter = [w for w in generate.WAITS if w < event.seconds]
        if event.kind == "wait" and shorter:
            yield replace(schedule, events=(*schedule.events[:index],
                                            replace(event, seconds=shorter[len(shorter) // 2]),
                                            *schedule.events[index + 1:]))
    if schedule.dead_leader:
        yield replace(schedule, dead_leader=False)
    if schedule.watched > 1:
        yield replace(schedule, watched=1)


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The smallest failing schedule found, and what finding it cost."""

    outcome: Outcome
    runs: int
    seconds: float
    complete: bool
    """True: no smaller candidate breaks the rule (a fixed point); False: out of time."""


def _rule(outcome: Outcome) -> str | None:
    first = outcome.verdict.first
    return None if first is None else first.rule.id


def shrink(failing: Outcome, runner: Runner, *, slots: int, seconds: float) -> Shrunk:
    """Shrink ``failing``'s schedule to the fewest events that still break the rule of its
    first violation, re-running candidates on the bed, ``slots`` at a time."""
    rule = _rule(failing)
    started = time.monotonic()
    deadline = started + seconds
    best, runs = failing, 0
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        pending = [c for c in candidates(best.schedule) if c.weight < best.schedule.weight]
        while pending and time.monotonic() < deadline:
            batch, pending = pending[:slots], pending[slots:]
            tried = run_batch([replace(c, notes={**best.schedule.notes, "shrink": runs + i})
                               for i, c in enumerate(batch)], runner, slots=len(batch),
                              seconds=max(1.0, deadline - time.monotonic()),
                              stop_on_failure=False)
            runs += len(tried)
            still = [o for o in tried if _rule(o) == rule]
            if still:
                best = min(still, key=lambda o: o.schedule.weight)
                improved = True
                break
    return Shrunk(best, runs, time.monotonic() - started,
                  complete=not improved and time.monotonic() < deadline)


def describe_events(events: tuple[Event, ...]) -> str:
    """Events one a line (for messages)."""
    return "\n".join(f"{i + 1}. {e.describe()}" for i, e in enumerate(events))
