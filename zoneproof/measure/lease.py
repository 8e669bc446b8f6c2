"""The HA controller Lease's observed history as a model: who could act when.

A holder *acquires* the Lease (the holder changes to it), *renews* it (same holder, a newer
renewTime) and loses it by *release* (holder set to ''), by *expiry* (no renewal for
``leaseDurationSeconds``: then it must have stopped acting) or by a *take-over* (another
holder). From the observations (timeline ``lease_holder`` events; ``lease_renewed`` events
{holder, duration_s} when a recorder reports renewals) the model derives each holder's
window of ability to act, from its acquire until its release or its last renewal plus the
duration. Two questions, both pure, of the timeline's figures (hand-over gaps and fencing
tokens for the SLOs and plots):

- ``handovers``: for each change of holder, the gap from the previous holder's last sign of
  life (its release, else its last renewal) to the next acquire, and the slack from the end
  of its ability to that acquire (negative: an overlap).
- ``token_regressions``: a new tenure whose fencing token (leaseTransitions) did not grow,
  or that dropped the token a tenure before it kept. A Lease that never carries one
  (``tokens_kept`` False: a client that leaves leaseTransitions unwritten, as the Python
  client's leader election does) has nothing to regress.

Who held the Lease when a delete was made, and whether a take-over came too early, is not
asked of this watcher's view (its receive times lag the writes): ``attribution`` answers
both from the API server's own record.

Without recorded renewals (no ``lease_renewed`` event, and no ``lease_holder`` event whose
recorder says it records renewals: detail ``renewals=recorded``) the model cannot know when
a silent holder's ability ended: its window then runs to the next change of holder (a
frozen holder nobody replaced still counts as able), and hand-over gaps are measured from
that change. With a recorder that records renewals, a holder that never renews is able
only until its acquire plus the duration. Times are wall-clock datetimes (the recorder's
observation times).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from zoneproof.measure.timeline import Event

__all__ = [
    "Handover",
    "LeaseHistory",
    "LeaseObservation",
    "Tenure",
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



@dataclass(frozen=True, slots=True)
class Handover:
    """From one holder to the next: ``gap_s`` from the previous holder's last sign of life,
    ``slack_s`` from the end of its ability (negative: overlap)."""

    previous: Tenure
    next: Tenure
    gap_s: float
    slack_s: float


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

    def token_regressions(self) -> list[tuple[Tenure, Tenure]]:
        """Consecutive tenures whose fencing token (leaseTransitions) did not grow, or was
        dropped after the earlier one kept it."""
        return [(a, b) for a, b in zip(self.tenures, self.tenures[1:], strict=False)
                if a.transitions is not None
                and (b.transitions is None or b.transitions <= a.transitions)]

    @property
    def tokens_kept(self) -> bool:
        """Some tenure's Lease carried a fencing token (leaseTransitions)."""
        return any(t.transitions is not None for t in self.tenures)

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
