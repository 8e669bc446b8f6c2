"""A bounded worker pool that serves queued tasks round-robin across keys (nodes).

A key that gets tasks while it has none queued is fresh: its first task runs before any
other key's next one (fresh keys oldest first), then the key joins the round. With 100
nodes queued at once, the first task of every node runs before the second task of any
node, and a node that goes NotReady while 1,000 deletes are queued gets its first
force-delete next, not after them. A task carries a token (the pod's uid); a token
already queued or running is not queued again (client-go's workqueue dedupe), so a
follow-up pass does not repeat a delete that is still in flight.

The pool starts no threads itself: the process runs ``work`` in N guarded threads (an
exception in a task ends that thread and so the process), tests call ``run_pending``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable

from zoneproof import errors

__all__ = ["FairPool", "Task"]

Task = Callable[[], None]


class FairPool:
    """Tasks queued per key, taken one key at a time in turn; ``workers`` run them."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise errors.ConfigError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self._ring: OrderedDict[str, deque[tuple[Hashable, Task]]] = OrderedDict()
        self._fresh: deque[str] = deque()
        """Keys whose first task has not been taken yet, oldest first."""
        self._tokens: set[Hashable] = set()
        """Tokens queued or running."""
        self._running = 0
        self._closed = False
        self._cond = threading.Condition()

    def submit(self, key: str, token: Hashable, task: Task) -> bool:
        """Queue ``task`` under ``key``; False (not queued) if ``token`` is pending or closed."""
        with self._cond:
            if self._closed or token in self._tokens:
                return False
            self._tokens.add(token)
            if key not in self._ring:
                self._ring[key] = deque()
                self._fresh.append(key)
            self._ring[key].append((token, task))
            self._cond.notify()
            return True

    def work(self) -> None:
        """One worker: run tasks until ``stop``."""
        while (item := self._next(block=True)) is not None:
            self._run(*item)

    def run_pending(self) -> int:
        """Run every queued task in this thread (no worker threads); how many ran."""
        count = 0
        while (item := self._next(block=False)) is not None:
            self._run(*item)
            count += 1
        return count

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until nothing is queued or running; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._ring and not self._running, timeout_s)

    def stop(self, timeout_s: float) -> bool:
        """Drop queued tasks, end ``work``, wait for running tasks; False if still running."""
        with self._cond:
            self._closed = True
            for tasks in self._ring.values():
                self._tokens.difference_update(token for token, _ in tasks)
            self._ring.clear()
            self._fresh.clear()
            self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._running, timeout_s)

    @property
    def pending(self) -> int:
        """Tasks queued or running."""
        with self._cond:
            return len(self._tokens)

    def _next(self, *, block: bool) -> tuple[Hashable, Task] | None:
        with self._cond:
            while not self._ring:
                if self._closed or not block:
                    return None
                self._cond.wait()
            if self._closed:
                return None
            key = self._fresh.popleft() if self._fresh else next(iter(self._ring))
            tasks = self._ring[key]
            item = tasks.popleft()
            if tasks:
                self._ring.move_to_end(key)
            else:
                del self._ring[key]
            self._running += 1
            return item

    def _run(self, token: Hashable, task: Task) -> None:
        try:
            task()
        finally:
            with self._cond:
                self._running -= 1
                self._tokens.discard(token)
                self._cond.notify_all()
