"""The one injector: checks, revert registered before inject, bounded duration, records."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from zoneproof.cluster import facets
from zoneproof.cluster.interface import Cluster, fault_max_duration_s
from zoneproof.faults.base import Fault, FaultRecord
from zoneproof.measure.timeline import Timeline

__all__ = ["Injector"]

log = logging.getLogger(__name__)


class Injector:
    """Injects faults into one cluster and guarantees each is reverted.

    The revert is registered before the fault is injected, so it runs on an exception in
    ``inject`` itself, on an exception in the caller's block, on Ctrl-C, and when the
    fault outlives ``max_duration_s`` (a watchdog reverts it). ``revert_all`` undoes every
    fault still active (rollbacks, signal handlers, finalizers). ``start``/``stop`` serve
    callers that inject and revert in separate calls (chaostoolkit activities).
    """

    def __init__(self, cluster: Cluster, timeline: Timeline) -> None:
        self.cluster, self.timeline = cluster, timeline
        self.records: list[FaultRecord] = []
        self._pending: dict[int, _Active] = {}
        self._next_key = 0
        self._lock = threading.Lock()

    def check(self, fault: Fault) -> tuple[str, ...]:
        """Raise FaultError if the cluster cannot or must not take ``fault``; its targets."""
        facets.require(self.cluster, fault.requires, what=f"fault {fault.name}")
        return fault.targets(self.cluster)

    def start(self, fault: Fault, *, max_duration_s: float) -> int:
        """Inject ``fault``; returns its key for ``stop``. Reverted if injection fails."""
        targets = self.check(fault)
        with self._lock:
            key = self._next_key = self._next_key + 1
        watchdog = threading.Timer(max_duration_s, self._expire, args=(key,))
        watchdog.daemon = True
        injected = self.timeline.add("fault_injected", fault.name, targets=",".join(targets))
        self._pending[key] = _Active(fault, targets, injected.t, watchdog, threading.Lock())
        log.info("fault %s injected into %s", fault.name, ", ".join(targets))
        watchdog.start()
        bound = fault_max_duration_s.set(max_duration_s)
        try:
            fault.inject(self.cluster, targets)
        except BaseException:
            self.stop(key)
            raise
        finally:
            fault_max_duration_s.reset(bound)
        return key

    def stop(self, key: int) -> FaultRecord | None:
        """Revert the fault ``key`` (once; None if it was reverted already)."""
        active = self._pending.pop(key, None)
        if active is None:
            return None
        active.watchdog.cancel()
        with active.lock:
            active.fault.revert(self.cluster, active.targets)
        event = self.timeline.add("fault_reverted", active.fault.name)
        log.info("fault %s reverted", active.fault.name)
        record = FaultRecord(active.fault.name, active.targets, active.injected_at, event.t)
        self.records.append(record)
        return record

    @contextlib.contextmanager
    def injected(self, fault: Fault, *, max_duration_s: float) -> Iterator[tuple[str, ...]]:
        """Inject ``fault`` for the duration of the block (at most ``max_duration_s``)."""
        key = self.start(fault, max_duration_s=max_duration_s)
        try:
            yield self._pending[key].targets if key in self._pending else ()
        finally:
            self.stop(key)

    def _expire(self, key: int) -> None:
        active = self._pending.get(key)
        if active is not None:
            log.warning("fault %s outlived its maximum duration: reverting", active.fault.name)
            self.timeline.add("fault_expired", active.fault.name)
            self.stop(key)

    def revert_all(self) -> list[FaultRecord]:
        """Revert every fault still active; their records."""
        return [r for key in list(self._pending) if (r := self.stop(key)) is not None]


@dataclass(frozen=True, slots=True)
class _Active:
    fault: Fault
    targets: tuple[str, ...]
    injected_at: float
    watchdog: threading.Timer
    lock: threading.Lock
