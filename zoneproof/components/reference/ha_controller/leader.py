"""Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection.

Acquire when the Lease is free or has not changed for its ``leaseDurationSeconds`` as
seen on *our* monotonic clock (remote timestamps are never trusted); renew every retry
period; every write carries the ``resourceVersion`` just read, so two candidates cannot
both win. A leader that cannot renew within the renew deadline, or that sees another
holder, has lost: ``on_lost`` is called once and the elector stops (the process exits).
``leaseTransitions`` is the fencing token. Release (on clean shutdown) writes an empty
holder with ``leaseDurationSeconds=1`` like client-go's ReleaseOnCancel.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from zoneproof import errors
from zoneproof._util import jsonlog

__all__ = [
    "JITTER_FACTOR",
    "Clock",
    "ElectionConfig",
    "Gate",
    "LameDuckGate",
    "LeaderElector",
    "LeaseApi",
    "Leadership",
    "StandbyQuirks",
    "SystemClock",
    "Unelected",
]

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
"""client-go's: the renew deadline must exceed retry period × this."""

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    ApiException, urllib3.exceptions.HTTPError, OSError,
)


class Clock(Protocol):
    """Time source; injected so timing logic is tested without sleeping."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (for all timing decisions)."""

    def now(self) -> datetime:
        """Wall-clock UTC time (only written into the Lease for humans)."""


class SystemClock:
    """The real clocks."""

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def now(self) -> datetime:
        """``datetime.now(UTC)``."""
        return datetime.now(UTC)


class LeaseApi(Protocol):
    """The three CoordinationV1Api calls the elector uses."""

    def read_namespaced_lease(self, name: str, namespace: str, **kwargs: Any) -> Any:
        """GET the Lease; ApiException(404) when absent."""

    def create_namespaced_lease(self, namespace: str, body: Any, **kwargs: Any) -> Any:
        """POST a Lease; ApiException(409) when it exists."""

    def replace_namespaced_lease(
        self, name: str, namespace: str, body: Any, **kwargs: Any
    ) -> Any:
        """PUT the Lease; ApiException(409) when ``resourceVersion`` is stale."""


@dataclass(frozen=True, slots=True)
class ElectionConfig:
    """Which Lease, who we are, and the client-go timing triple (seconds)."""

    lease_name: str
    lease_namespace: str
    identity: str
    lease_duration_s: int = 15
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise errors.ConfigError("invalid leader election settings: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """Every violated rule, as messages naming the option to fix."""
        found = [f"{name} must not be empty" for name, value in (
            ("--lease-name", self.lease_name), ("--lease-namespace", self.lease_namespace),
            ("--identity", self.identity)) if not value]
        if self.lease_duration_s < 1:
            found.append(f"--lease-duration must be >= 1s, got {self.lease_duration_s}")
        if self.retry_period_s <= 0:
            found.append(f"--retry-period must be > 0, got {self.retry_period_s:g}s")
        if self.renew_deadline_s >= self.lease_duration_s:
            found.append(f"--lease-duration ({self.lease_duration_s}s) must be greater than "
                         f"--renew-deadline ({self.renew_deadline_s:g}s)")
        if self.renew_deadline_s <= JITTER_FACTOR * self.retry_period_s:
            found.append(f"--renew-deadline ({self.renew_deadline_s:g}s) must be greater than "
                         f"{JITTER_FACTOR} x --retry-period ({self.retry_period_s:g}s)")
        return found


@dataclass(frozen=True, slots=True)
class Leadership:
    """Proof of leadership at one moment: who, and the fencing token (None: no Lease)."""

    identity: str
    lease_transitions: int | None


@dataclass(frozen=True, slots=True)
class StandbyQuirks:
    """How a candidate treats a Lease another holds; the defaults are client-go's (the
    broken variants ``exits-as-standby``, ``takes-only-released``, ``takes-lease-early``
    change one each)."""

    stay: bool = True
    """False: give up (exit) at the first attempt that finds another holder."""
    take_expired: bool = True
    """False: take only a free Lease, never an expired one."""
    expiry_fraction: float = 1.0
    """The fraction of the holder's lease duration after which it may be taken."""


class Gate(Protocol):
    """Asked immediately before every action: may this process act now?"""

    def current(self) -> Leadership | None:
        """The leadership to act under, or None (do not act)."""


@dataclass(frozen=True, slots=True)
class _Record:
    """The Lease fields that matter; equality means "unchanged since last read"."""

    holder: str
    duration_s: int
    acquire_time: object
    renew_time: object
    transitions: int

    @classmethod
    def of(cls, lease: Any) -> _Record:
        spec = lease.spec or client.V1LeaseSpec()
        return cls(
            holder=spec.holder_identity or "",
            duration_s=int(spec.lease_duration_seconds or 0),
            acquire_time=spec.acquire_time,
            renew_time=spec.renew_time,
            transitions=int(spec.lease_transitions or 0),
        )


def _micro_time(moment: datetime) -> datetime:
    """``moment`` in UTC with a non-zero microsecond.

    The API server parses MicroTime with exactly six fraction digits; the client prints
    datetimes with ``isoformat()``, which drops ``.000000``, so such a write would fail.
    """
    moment = moment.astimezone(UTC)
    return moment if moment.microsecond else moment.replace(microsecond=1)


class LeaderElector:
    """One candidate. ``run`` loops in a thread; ``current`` is the Gate for actions."""

    def __init__(
        self,
        api: LeaseApi,
        config: ElectionConfig,
        *,
        on_lost: Callable[[str], None],
        on_started: Callable[[Leadership], None] | None = None,
        clock: Clock | None = None,
        renew: bool = True,
        before_acquire: Callable[[], None] | None = None,
        keep_competing: bool = True,
        standby: StandbyQuirks | None = None,
    ) -> None:
        """``renew`` False is the ``acts-on-expired-lease`` variant: once leader it never
        renews, yet ``current`` keeps answering leader. ``before_acquire`` (the
        ``acts-before-lease`` variant) runs just before writing a Lease it takes over.
        ``keep_competing`` False is the ``gives-up-as-standby`` variant: once it has seen
        another holder renew the Lease it never tries again (the process runs on)."""
        self._renew = renew
        self._keep_competing = keep_competing
        self._standby = standby or StandbyQuirks()
        self._gave_up = False
        self._before_acquire = before_acquire
        self._api = api
        self._config = config
        self._on_lost = on_lost
        self._on_started = on_started
        self._clock: Clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._held = False
        self._done = False
        self._transitions: int | None = None
        self._last_renew = float("-inf")
        self._previous_renew = float("-inf")
        """The renewal before the last one (the last one's start on a new term)."""
        self._observed: _Record | None = None
        self._observed_at = float("-inf")

    @property
    def identity(self) -> str:
        """Our holderIdentity."""
        return self._config.identity

    @property
    def fencing_token(self) -> int | None:
        """leaseTransitions of our current term, None when not leader."""
        lead = self.current()
        return None if lead is None else lead.lease_transitions

    @property
    def done(self) -> bool:
        """True after the Lease was lost or released: this elector never acts again."""
        return self._done

    def current(self) -> Leadership | None:
        """Leadership if we hold the Lease and renewed it within the renew deadline."""
        with self._lock:
            fresh = (not self._renew
                     or self._clock.monotonic() - self._last_renew < self._config.renew_deadline_s)
            if self._held and not self._done and fresh and self._transitions is not None:
                return Leadership(self._config.identity, self._transitions)
            return None

    def run(self, stop: threading.Event) -> None:
        """Acquire and renew every retry period until ``stop`` is set or the Lease is lost."""
        while not stop.is_set() and not self._done:
            self.step()
            stop.wait(self._next_wait_s())

    def step(self) -> bool:
        """One acquire-or-renew attempt (and the deadline check); True when leader after it.

        A held Lease whose renew deadline has passed is lost, even if a renewal then
        succeeds: the Gate has already refused to act (deletes were skipped as "not
        leader"), so this process must never act again; it exits, and the next leader's
        new term reconciles what was skipped (client-go gives up at the deadline too).
        """
        if self._done or self._gave_up:
            return False
        if self._held and not self._renew:
            return True
        started = self._clock.monotonic()
        renewed = self._try_acquire_or_renew(started)
        if self._lapsed(before=started if renewed else None):
            self._lose("renew-deadline-exceeded" if not renewed else "renewed-after-deadline")
        return self.current() is not None

    def _lapsed(self, before: float | None = None) -> bool:
        """Held, and the renew deadline passed (counting from the renewal before ``before``
        when one just succeeded at ``before``; from the last renewal otherwise)."""
        with self._lock:
            last = self._previous_renew if before is not None else self._last_renew
            return self._held and self._clock.monotonic() - last >= self._config.renew_deadline_s

    def release(self) -> bool:
        """Stop acting and hand the Lease back (empty holder, 1 s); True when written."""
        with self._lock:
            was_held, transitions = self._held and not self._done, self._transitions
            self._held, self._done = False, True
        if not was_held:
            return False
        cfg = self._config
        try:
            lease = self._api.read_namespaced_lease(
                cfg.lease_name, cfg.lease_namespace, _request_timeout=cfg.renew_deadline_s)
            if _Record.of(lease).holder != cfg.identity:
                return False
            now = _micro_time(self._clock.now())
            lease.spec = client.V1LeaseSpec(
                holder_identity="", lease_duration_seconds=1, acquire_time=now,
                renew_time=now, lease_transitions=transitions)
            self._api.replace_namespaced_lease(
                cfg.lease_name, cfg.lease_namespace, lease, _request_timeout=cfg.renew_deadline_s)
        except TRANSIENT_ERRORS as exc:
            jsonlog.emit(log, logging.WARNING, "lease-release-failed", **self._fields(),
                         lease_transitions=transitions, error=_describe(exc))
            return False
        jsonlog.emit(log, logging.INFO, "lease-released", **self._fields(),
                     lease_transitions=transitions)
        return True

    # -- internals ---------------------------------------------------------------------

    def _fields(self) -> dict[str, object]:
        cfg = self._config
        return {"identity": cfg.identity, "lease": f"{cfg.lease_namespace}/{cfg.lease_name}"}

    def _next_wait_s(self) -> float:
        """The retry period, cut short so a held lease's deadline is checked on time."""
        with self._lock:
            if not self._held or not self._renew:
                return self._config.retry_period_s
            left = self._last_renew + self._config.renew_deadline_s - self._clock.monotonic()
        return max(0.0, min(self._config.retry_period_s, left))

    def _request_timeout_s(self, started: float) -> float:
        """No call may outlive the renew deadline of a held Lease."""
        with self._lock:
            if not self._held:
                return self._config.renew_deadline_s
            left = self._last_renew + self._config.renew_deadline_s - started
        return max(0.05, left)

    def _try_acquire_or_renew(self, started: float) -> bool:
        cfg = self._config
        timeout = self._request_timeout_s(started)
        now = _micro_time(self._clock.now())
        try:
            lease = self._api.read_namespaced_lease(
                cfg.lease_name, cfg.lease_namespace, _request_timeout=timeout)
        except ApiException as exc:
            if exc.status != 404:
                return self._failed("read", exc)
            return self._create(now, started, timeout)
        except TRANSIENT_ERRORS as exc:
            return self._failed("read", exc)

        record = _Record.of(lease)
        if record != self._observed:
            renewed_by_other = (self._observed is not None and not self._held
                                and record.holder not in ("", cfg.identity)
                                and record.holder == self._observed.holder)
            self._observed, self._observed_at = record, started
            if renewed_by_other and not self._keep_competing:
                self._gave_up = True  # "a healthy leader: not needed" (the variant's bug)
                jsonlog.emit(log, logging.INFO, "standby-gave-up", **self._fields(),
                             holder=record.holder)
                return False
        if self._held and record.holder != cfg.identity:
            self._lose(f"lease-held-by:{record.holder or '<nobody>'}")
            return False
        if record.holder and record.holder != cfg.identity and (
                not self._standby.take_expired
                or self._observed_at + record.duration_s * self._standby.expiry_fraction
                > started):
            if not self._standby.stay:
                self._lose(f"standby-found-holder:{record.holder}")  # the variant's bug
            return False

        mine = record.holder == cfg.identity
        transitions = record.transitions if mine else record.transitions + 1
        acquire_time = now
        if mine and isinstance(record.acquire_time, datetime):
            acquire_time = _micro_time(record.acquire_time)
        lease.spec = client.V1LeaseSpec(
            holder_identity=cfg.identity, lease_duration_seconds=cfg.lease_duration_s,
            acquire_time=acquire_time, renew_time=now, lease_transitions=transitions)
        if not mine and self._before_acquire is not None:
            self._before_acquire()
        try:
            self._api.replace_namespaced_lease(
                cfg.lease_name, cfg.lease_namespace, lease, _request_timeout=timeout)
        except TRANSIENT_ERRORS as exc:
            return self._failed("replace", exc)
        self._observed = _Record.of(lease)
        self._observed_at = started
        self._became_leader(transitions, started)
        return True

    def _create(self, now: datetime, started: float, timeout: float) -> bool:
        cfg = self._config
        lease = client.V1Lease(
            metadata=client.V1ObjectMeta(name=cfg.lease_name, namespace=cfg.lease_namespace),
            spec=client.V1LeaseSpec(
                holder_identity=cfg.identity, lease_duration_seconds=cfg.lease_duration_s,
                acquire_time=now, renew_time=now, lease_transitions=0))
        if self._before_acquire is not None:
            self._before_acquire()
        try:
            self._api.create_namespaced_lease(cfg.lease_namespace, lease, _request_timeout=timeout)
        except TRANSIENT_ERRORS as exc:
            return self._failed("create", exc)
        self._observed, self._observed_at = _Record.of(lease), started
        self._became_leader(0, started)
        return True

    def _failed(self, verb: str, exc: BaseException) -> bool:
        level = logging.WARNING if self._held else logging.DEBUG
        jsonlog.emit(log, level, "lease-attempt-failed", **self._fields(), verb=verb,
                     error=_describe(exc))
        return False

    def _became_leader(self, transitions: int, started: float) -> None:
        with self._lock:
            new_term = not self._held or self._transitions != transitions
            self._previous_renew = started if new_term else self._last_renew
            self._held, self._transitions, self._last_renew = True, transitions, started
        if new_term:
            jsonlog.emit(log, logging.INFO, "leader-acquired", **self._fields(),
                         lease_transitions=transitions)
            if self._on_started is not None:
                self._on_started(Leadership(self._config.identity, transitions))

    def _lose(self, reason: str) -> None:
        with self._lock:
            if self._done:
                return
            transitions = self._transitions
            self._held, self._done = False, True
        jsonlog.emit(log, logging.ERROR, "leader-lost", **self._fields(),
                     lease_transitions=transitions, reason=reason)
        self._on_lost(reason)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ApiException):
        return f"HTTP {exc.status} {exc.reason}"
    return f"{type(exc).__name__}: {exc}"


class Unelected:
    """Gate of the ``no-leader-election`` variant: always acts, with no fencing token."""

    def __init__(self, identity: str) -> None:
        self._leadership = Leadership(identity, None)

    def current(self) -> Leadership | None:
        """Always leader."""
        return self._leadership


class LameDuckGate:
    """Gate of the ``survives-lease-loss`` variant: once leader, acts forever."""

    def __init__(self, inner: Gate) -> None:
        self._inner = inner
        self._last: Leadership | None = None

    def current(self) -> Leadership | None:
        """The inner gate's answer, or the last leadership it ever gave (stale)."""
        lead = self._inner.current()
        if lead is not None:
            self._last = lead
        return self._last
