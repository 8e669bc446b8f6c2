"""The HA controller Lease's observed history as a model: who could act when.

A holder *acquires* the Lease (the holder changes to it), *renews* it (same holder, a newer
renewTime) and loses it by *release* (holder set to ''), by *expiry* (no renewal for
``leaseDurationSeconds``: then it must have stopped acting) or by a *take-over* (another
holder). From the observations (timeline ``lease_holder`` events; ``lease_renewed`` events
{holder, duration_s} when a recorder reports renewals) the model derives each holder's
window of ability to act, from its acquire until its release or its last renewal plus the
duration. Three questions, all pure:

- ``overlaps``: two holders able to act at one instant (a take-over before the previous
  holder released or expired). The Lease's contract says never.
- ``handovers``: for each change of holder, the gap from the previous holder's last sign of
  life (its release, else its last renewal) to the next acquire, and the slack from the end
  of its ability to that acquire (negative: an overlap).
- ``unfenced``: actions (e.g. audited pod deletes) by an identity outside its own window,
  in one of two models: *holder of record* (from its acquire until the next change of
  holder: the "concurrent actors" question, ``attribution.unfenced_deletes``) or *able to
  act* (until its release or its last renewal plus the duration: also catches a holder
  acting on after its Lease expired when nobody took over).
- ``token_regressions``: a new tenure whose fencing token (leaseTransitions) did not grow.

Without recorded renewals (no ``lease_renewed`` event, and no ``lease_holder`` event whose
recorder says it records renewals: detail ``renewals=recorded``) the model cannot know when
a silent holder's ability ended: its window then runs to the next change of holder (a
frozen holder nobody replaced still counts as able), and hand-over gaps are measured from
that change. With a recorder that records renewals, a holder that never renews is able
only until its acquire plus the duration. Times are wall-clock datetimes
(the recorder's observation times), compared with a tolerance for watch latency.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from zoneproof.measure.timeline import Event

CLOCK_TOLERANCE_S = 0.5
"""Seconds by which windows are widened when judging: the LeaseRecorder stamps a change when
its watch delivers it (milliseconds to tens of ms after the write on one machine), an audit
record when the API server received the request; far below the seconds a lame duck or a
second actor acts outside its window."""

__all__ = [
    "CLOCK_TOLERANCE_S",
    "Action",
    "Handover",
    "LeaseHistory",
    "LeaseObservation",
    "Overlap",
    "Tenure",
    "UnfencedAction",
    "observations",
    "renewals_recorded",
]

RENEWALS, RECORDED = "renewals", "recorded"
"""The ``lease_holder`` event detail by which a recorder says it records every renewal (so
the absence of ``lease_renewed`` events means the holder did not renew)."""


@dataclass(frozen=True, slots=True)
class LeaseObservation:
    """The Lease as seen at ``at``: its holder ('' when free), whether this is a renewal of
    the same holder, and its leaseDurationSeconds when known."""

    at: dt.datetime
    holder: str
    renewal: bool = False
    duration_s: float | None = None
    transitions: int | None = None
    """leaseTransitions, the fencing token: it grows with every change of holder."""
    renewals_recorded: bool = False
    """The recorder says it records every renewal (``lease_holder`` detail ``renewals``)."""


@dataclass(frozen=True, slots=True)
class Tenure:
    """``holder`` held the Lease from ``start`` until the next change ``end`` (None: still
    at the end of recording); ``last_renewed`` is its last observation (acquire or renewal)."""

    holder: str
    start: dt.datetime
    end: dt.datetime | None
    last_renewed: dt.datetime
    released: bool = False
    duration_s: float | None = None
    transitions: int | None = None

    @property
    def able_until(self) -> dt.datetime | None:
        """When it stopped being able to act: its last renewal plus the duration, or its
        release if that came first; the next change when the duration is unknown; None: open."""
        if self.duration_s is None:
            return self.end
        expired = self.last_renewed + dt.timedelta(seconds=self.duration_s)
        return min(expired, self.end) if self.released and self.end is not None else expired

    def held_at(self, at: dt.datetime) -> bool:
        """True if it was the recorded holder at ``at`` (from acquire to the next change)."""
        return self.start <= at and (self.end is None or at < self.end)

    def able_at(self, at: dt.datetime, tolerance_s: float) -> bool:
        """True if ``at`` falls in its window of ability widened by ``tolerance_s``."""
        slack = dt.timedelta(seconds=tolerance_s)
        until = self.able_until
        return self.start - slack <= at and (until is None or at <= until + slack)


@dataclass(frozen=True, slots=True)
class Overlap:
    """``later`` acquired while ``earlier`` was still able to act, for ``seconds``."""

    earlier: Tenure
    later: Tenure
    seconds: float

    def describe(self) -> str:
        """One line for a message."""
        return (f"{self.later.holder} acquired the Lease at {self.later.start.isoformat()} while "
                f"{self.earlier.holder} could still act for {self.seconds:.2f} s (last renewed "
                f"{self.earlier.last_renewed.isoformat()}, not released)")


@dataclass(frozen=True, slots=True)
class Handover:
    """From one holder to the next: ``gap_s`` from the previous holder's last sign of life,
    ``slack_s`` from the end of its ability (negative: overlap)."""

    previous: Tenure
    next: Tenure
    gap_s: float
    slack_s: float


@dataclass(frozen=True, slots=True)
class Action:
    """Something an identity did at ``at`` (e.g. ``deleted ns/pod``)."""

    at: dt.datetime
    actor: str
    what: str


@dataclass(frozen=True, slots=True)
class UnfencedAction:
    """An action outside its actor's window of ability; ``holder``: who held the Lease then."""

    action: Action
    holder: str


def observations(events: Iterable[Event]) -> list[LeaseObservation]:
    """Lease observations from ``lease_holder`` and ``lease_renewed`` events, in time order
    (other kinds are ignored)."""
    found = []
    for event in sorted(events, key=lambda e: e.t):
        if event.kind not in ("lease_holder", "lease_renewed"):
            continue
        duration, token = event.detail.get("duration_s"), event.detail.get("transitions")
        found.append(LeaseObservation(dt.datetime.fromisoformat(event.wall),
                                      event.detail.get("holder", ""),
                                      renewal=event.kind == "lease_renewed",
                                      duration_s=float(duration) if duration else None,
                                      transitions=int(token) if token else None,
                                      renewals_recorded=event.detail.get(RENEWALS) == RECORDED))
    return found


def _records_renewals(event: Event) -> bool:
    return event.kind == "lease_renewed" or event.detail.get(RENEWALS) == RECORDED


def renewals_recorded(events: Iterable[Event]) -> bool:
    """True if the Lease's recorder recorded its renewals (durations then count)."""
    return any(_records_renewals(e) for e in events if e.kind in ("lease_holder", "lease_renewed"))


def _tenures(seen: list[LeaseObservation]) -> tuple[Tenure, ...]:
    """Tenures from time-ordered observations. Durations count only when renewals were
    recorded: otherwise a holder's last renewal is unknown, not its acquire."""
    if not any(o.renewal or o.renewals_recorded for o in seen):
        seen = [LeaseObservation(o.at, o.holder, transitions=o.transitions) for o in seen]
    found: list[Tenure] = []
    current: LeaseObservation | None = None
    last, duration = None, None
    for obs in [*seen, None]:
        if obs is not None and current is not None and obs.holder == current.holder:
            last, duration = obs.at, obs.duration_s or duration  # a renewal (or a repeat)
            continue
        if current is not None and current.holder and last is not None:
            found.append(Tenure(current.holder, current.at, None if obs is None else obs.at,
                                last, released=obs is not None and not obs.holder,
                                duration_s=duration, transitions=current.transitions))
        current = obs
        if obs is not None:
            last, duration = obs.at, obs.duration_s
    return tuple(found)


class LeaseHistory:
    """The tenures of one Lease, and the model's answers over them."""

    def __init__(self, seen: Iterable[LeaseObservation]) -> None:
        self.tenures = _tenures(sorted(seen, key=lambda o: o.at))

    def holder_at(self, at: dt.datetime) -> str:
        """The recorded holder at ``at`` ('' when free or unrecorded)."""
        return next((t.holder for t in self.tenures if t.held_at(at)), "")

    def overlaps(self, tolerance_s: float) -> list[Overlap]:
        """Take-overs made while the previous holder could still act (beyond ``tolerance_s``)."""
        found = []
        for earlier, later in zip(self.tenures, self.tenures[1:], strict=False):
            until = earlier.able_until
            if earlier.holder == later.holder or until is None:
                continue
            seconds = (until - later.start).total_seconds()
            if seconds > tolerance_s:
                found.append(Overlap(earlier, later, seconds))
        return found

    def token_regressions(self) -> list[tuple[Tenure, Tenure]]:
        """Consecutive tenures whose fencing token (leaseTransitions) did not grow."""
        return [(a, b) for a, b in zip(self.tenures, self.tenures[1:], strict=False)
                if a.transitions is not None and b.transitions is not None
                and b.transitions <= a.transitions]

    def handovers(self) -> list[Handover]:
        """Every change from one holder to another (through a free Lease or not)."""
        found = []
        for previous, following in zip(self.tenures, self.tenures[1:], strict=False):
            if previous.holder == following.holder:
                continue
            silent = previous.released or previous.duration_s is None
            alive = previous.end if silent and previous.end else previous.last_renewed
            able = previous.able_until or following.start
            found.append(Handover(previous, following,
                                  (following.start - alive).total_seconds(),
                                  (following.start - able).total_seconds()))
        return found

    def fenced(self, actor: str, at: dt.datetime, tolerance_s: float, *,
               expiry: bool = True) -> bool:
        """True if ``actor`` was able to act at ``at`` (one of its windows, widened); with
        ``expiry`` False: if it was the holder of record then (its Lease may have expired)."""
        if expiry:
            return any(t.holder == actor and t.able_at(at, tolerance_s) for t in self.tenures)
        slack = dt.timedelta(seconds=tolerance_s)
        return any(t.holder == actor and t.start - slack <= at
                   and (t.end is None or at <= t.end + slack) for t in self.tenures)

    def unfenced(self, actions: Iterable[Action], tolerance_s: float, *,
                 expiry: bool = True) -> list[UnfencedAction]:
        """Actions made outside their actor's own windows of ability (``expiry`` False:
        outside its tenures as holder of record)."""
        return [UnfencedAction(a, self.holder_at(a.at)) for a in actions
                if not self.fenced(a.actor, a.at, tolerance_s, expiry=expiry)]
