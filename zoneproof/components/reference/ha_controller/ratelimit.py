"""Client-side rate limit of API requests: a token bucket, like client-go's QPS/burst.

``burst`` requests may go at once; after that one per ``1/qps`` seconds. A caller
reserves a token and sleeps for the wait it was given, so waiting threads are served in
the order they asked. The Lease elector is deliberately not limited: a renewal must never
queue behind a storm of deletes (losing the Lease mid-failover would be worse).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from zoneproof import errors

__all__ = ["TokenBucket"]


class TokenBucket:
    """``qps`` tokens per second, at most ``burst`` saved up; starts full."""

    def __init__(self, qps: float, burst: int, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        problems = []
        if qps <= 0:
            problems.append(f"--kube-api-qps must be > 0, got {qps:g}")
        if burst < 1:
            problems.append(f"--kube-api-burst must be >= 1, got {burst}")
        if problems:
            raise errors.ConfigError("; ".join(problems))
        self.qps, self.burst = qps, burst
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def reserve(self) -> float:
        """Take one token; the seconds to wait before using it (0.0 when one was saved)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def acquire(self) -> float:
        """Wait for a token; the seconds waited."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait
