"""The one injector: checks, revert registered before inject, bounded duration, records."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from zoneproof import errors
from zoneproof.cluster.interface import Cluster
from zoneproof.faults.base import Fault, FaultRecord
from zoneproof.measure.timeline import Timeline

__all__ = ["Injector"]

log = logging.getLogger(__name__)


class Injector:
    """Injects faults into one cluster and guarantees each is reverted.

    The revert is registered before the fault is injected, so it runs on an exception in
    ``inject`` itself, on an exception in the caller's block, on Ctrl-C, and when the
    fault outlives ``max_duration_s`` (a watchdog reverts it). ``revert_all`` undoes every
    fault still active (for signal handlers and finalizers).
    """

    def __init__(self, cluster: Cluster, timeline: Timeline) -> None:
        self.cluster, self.timeline = cluster, timeline
        self.records: list[FaultRecord] = []
        self._pending: dict[int, tuple[Fault, tuple[str, ...], threading.Lock]] = {}

    def check(self, fault: Fault) -> tuple[str, ...]:
        """Raise FaultError if the cluster cannot or must not take ``fault``; its targets."""
        missing = fault.requires - self.cluster.capabilities
        if missing:
            names = ", ".join(sorted(c.value for c in missing))
            raise errors.FaultError(
                f"fault {fault.name} needs {names}, which the {self.cluster.backend} backend of "
                f"cluster {self.cluster.name!r} does not allow: use the local or kind backend, "
                "or --allow-destructive for a cluster you own")
        return fault.targets(self.cluster)

    def _revert_once(self, key: int) -> float | None:
        entry = self._pending.pop(key, None)
        if entry is None:
            return None
        fault, targets, lock = entry
        with lock:
            fault.revert(self.cluster, targets)
        event = self.timeline.add("fault_reverted", fault.name)
        log.info("fault %s reverted", fault.name)
        return event.t

    @contextlib.contextmanager
    def injected(self, fault: Fault, *, max_duration_s: float) -> Iterator[tuple[str, ...]]:
        """Inject ``fault`` for the duration of the block (at most ``max_duration_s``)."""
        targets = self.check(fault)
        key = id(fault)
        self._pending[key] = (fault, targets, threading.Lock())
        watchdog = threading.Timer(max_duration_s, self._expire, args=(key,))
        watchdog.daemon = True
        start = self.timeline.add("fault_injected", fault.name, targets=",".join(targets))
        log.info("fault %s injected into %s", fault.name, ", ".join(targets))
        reverted_at: float | None = None
        try:
            watchdog.start()
            fault.inject(self.cluster, targets)
            yield targets
        finally:
            watchdog.cancel()
            reverted_at = self._revert_once(key)
            self.records.append(FaultRecord(fault.name, targets, start.t, reverted_at))

    def _expire(self, key: int) -> None:
        if key in self._pending:
            log.warning("fault %s outlived its maximum duration: reverting", self._pending[key][0].name)
            self.timeline.add("fault_expired", self._pending[key][0].name)
            self._revert_once(key)

    def revert_all(self) -> None:
        """Revert every fault still active."""
        for key in list(self._pending):
            self._revert_once(key)
