"""The one injector: checks, revert registered before inject, bounded duration, records."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace

from zoneproof.cluster import facets
from zoneproof.cluster.interface import Cluster, fault_max_duration_s
from zoneproof.faults.base import Fault, FaultContext, FaultRecord
from zoneproof.measure.timeline import Timeline

__all__ = ["Injector"]

log = logging.getLogger(__name__)


class Injector:
    """Injects faults into one cluster and guarantees each is reverted.

    The revert is registered before the fault is injected, so it runs on an exception in
    ``inject`` itself, on an exception in the caller's block, on Ctrl-C, and when the
    fault outlives ``max_duration_s`` (a watchdog reverts it). ``revert_all`` undoes every
    fault still active (rollbacks, signal handlers, finalizers). ``start``/``stop`` serve
    callers that inject and revert in separate calls (chaostoolkit activities). A fault
    acts on ``context`` (default: the cluster alone).
    """

    def __init__(self, cluster: Cluster, timeline: Timeline) -> None:
        self.cluster, self.timeline = cluster, timeline
        self.records: list[FaultRecord] = []
        """One per fault injected, in order; ``reverted_at`` is None while it is active."""
        self._pending: dict[int, _Active] = {}
        self._indices: dict[int, int] = {}
        """Key → index of its record, for every fault ever started."""
        self._next_key = 0
        self._lock = threading.Lock()

    def _context(self, context: FaultContext | None) -> FaultContext:
        return context if context is not None else FaultContext(self.cluster)

    def check(self, fault: Fault, context: FaultContext | None = None) -> tuple[str, ...]:
        """Raise FaultError if the cluster cannot or must not take ``fault``; its targets."""
        facets.require(self.cluster, fault.requires, what=f"fault {fault.name}")
        return fault.targets(self._context(context))

    def start(self, fault: Fault, *, max_duration_s: float,
              context: FaultContext | None = None) -> int:
        """Inject ``fault``; returns its key for ``stop``. Reverted if injection fails."""
        context = self._context(context)
        targets = self.check(fault, context)
        effects = tuple(sorted(fault.effects))
        with self._lock:
            key = self._next_key = self._next_key + 1
            watchdog = threading.Timer(max_duration_s, self._expire, args=(key,))
            watchdog.daemon = True
            injected = self.timeline.add("fault_injected", fault.name, targets=",".join(targets),
                                         effects=",".join(effects))
            self.records.append(FaultRecord(fault.name, effects, targets, injected.t, None))
            self._indices[key] = len(self.records) - 1
            self._pending[key] = _Active(fault, context, self._indices[key], watchdog,
                                         threading.Lock())
        log.info("fault %s injected into %s", fault.name, ", ".join(targets))
        watchdog.start()
        bound = fault_max_duration_s.set(max_duration_s)
        try:
            fault.inject(context, targets)
        except BaseException:
            self.stop(key)
            raise
        finally:
            fault_max_duration_s.reset(bound)
        with self._lock:  # in force now (unless the watchdog reverted it meanwhile)
            index = self._indices[key]
            if self.records[index].reverted_at is None:
                self.records[index] = replace(self.records[index], in_force_at=self.timeline.now())
        return key

    def record(self, key: int) -> FaultRecord:
        """The record of the fault ``key`` as it is now (reverted or not)."""
        with self._lock:
            return self.records[self._indices[key]]

    def stop(self, key: int) -> FaultRecord | None:
        """Revert the fault ``key`` (once; None if it was reverted already)."""
        active = self._pending.pop(key, None)
        if active is None:
            return None
        active.watchdog.cancel()
        record = self.records[active.index]
        with active.lock:
            active.fault.revert(active.context, record.targets)
        event = self.timeline.add("fault_reverted", active.fault.name)
        log.info("fault %s reverted", active.fault.name)
        with self._lock:  # re-read: start() may have set in_force_at since the read above
            record = self.records[active.index] = replace(self.records[active.index],
                                                          reverted_at=event.t)
        return record

    @contextlib.contextmanager
    def injected(self, fault: Fault, *, max_duration_s: float,
                 context: FaultContext | None = None) -> Iterator[tuple[str, ...]]:
        """Inject ``fault`` for the duration of the block (at most ``max_duration_s``)."""
        key = self.start(fault, max_duration_s=max_duration_s, context=context)
        try:
            yield self.record(key).targets
        finally:
            self.stop(key)

    def _expire(self, key: int) -> None:
        active = self._pending.get(key)
        if active is not None:
            log.warning("fault %s outlived its maximum duration: reverting", active.fault.name)
            self.timeline.add("fault_expired", active.fault.name)
            self.stop(key)

    def revert_all(self, kind: str = "") -> list[FaultRecord]:
        """Revert every fault still active (of ``kind`` only, when given); their records."""
        keys = [k for k, a in list(self._pending.items()) if not kind or a.fault.name == kind]
        return [r for key in keys if (r := self.stop(key)) is not None]


@dataclass(frozen=True, slots=True)
class _Active:
    fault: Fault
    context: FaultContext
    index: int
    """Of its record in ``Injector.records``."""
    watchdog: threading.Timer
    lock: threading.Lock
