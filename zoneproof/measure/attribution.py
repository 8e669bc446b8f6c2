"""Attribution: was every audited pod delete by a replica made while that replica held the Lease?

Pure: audited deletions (``audit.pod_deletions``) and ``lease_holder`` / ``lease_renewed``
events of a Timeline in, violations out. Two questions of the Lease model
(``zoneproof.measure.lease``): was the deleter the *holder of record* then (the "never two
actors" check of the HA controller suites), or, stricter (``expiry=True``), was it *able
to act* then (its Lease not yet expired nor released)?

Clock tolerance: an audit time is the API server's ``requestReceivedTimestamp``; a
``lease_holder`` event is stamped when the LeaseRecorder's watch delivers the change,
i.e. later than the Lease write by the watch latency (milliseconds to tens of ms on one
machine; both clocks are this machine's wall clock). So a new leader's first delete may
be audited slightly *before* its tenure was recorded, and a tenure is recorded as ending
slightly late. ``CLOCK_TOLERANCE_S`` widens every tenure by that much on both sides; it
is far below the seconds a lame duck or a second actor acts outside its tenure.

As holder of record a tenure lasts until the *holder* changes, so a holder whose Lease
expired but nobody took it over yet (e.g. a frozen process) still counts as holding it;
with ``expiry`` and recorded ``lease_renewed`` events it ends at the last renewal plus
the duration.

No tolerance at all (``deletes_not_after_own_lease_write``): the API server audits both the
replicas' Lease writes and their deletes, stamping each with its own clock when it received
the request, so their order needs none. A delete whose author was not the last to write the
Lease before it (e.g. a catch-up made milliseconds *before* taking the Lease over, inside
``CLOCK_TOLERANCE_S``) did not follow a Lease it held.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zoneproof.measure.audit import LeaseRequest, PodDeletion
from zoneproof.measure.lease import CLOCK_TOLERANCE_S, LeaseHistory, Tenure, observations
from zoneproof.measure.timeline import Event

__all__ = ["CLOCK_TOLERANCE_S", "Tenure", "UnfencedDelete", "deletes_not_after_own_lease_write",
           "tenures", "unfenced_deletes"]


@dataclass(frozen=True, slots=True)
class UnfencedDelete:
    """An audited delete by a replica that did not hold the Lease then."""

    deletion: PodDeletion
    holder: str
    """Who held the Lease at that moment ('' when nobody did or nothing was recorded)."""
    by_audit_order: bool = False
    """Judged by the audit log's order: ``holder`` made the last Lease write before it."""

    def describe(self) -> str:
        """One line for an assertion message."""
        d = self.deletion
        what = f"{d.user} deleted {d.namespace}/{d.pod} at {d.at.isoformat()} (HTTP {d.code})"
        if self.by_audit_order:
            last = (f"was by {self.holder!r}" if self.holder
                    else "was none: no replica had written the Lease yet")
            return (f"{what} before writing the Lease itself: the last replica Lease write "
                    f"the API server received before that delete {last}")
        if self.holder == d.user:
            return (f"{what} as holder of record of a Lease it could no longer act on (not "
                    "renewed within its leaseDuration)")
        return f"{what} while the Lease holder of record was {self.holder or '<nobody>'!r}"


def tenures(events: Iterable[Event]) -> list[Tenure]:
    """Holder tenures from ``lease_holder`` events (other kinds are ignored); empty holders drop."""
    return list(LeaseHistory(observations(events)).tenures)


def unfenced_deletes(deletions: Iterable[PodDeletion], events: Iterable[Event], *,
                     users_prefix: str, tolerance_s: float = CLOCK_TOLERANCE_S,
                     expiry: bool = False) -> list[UnfencedDelete]:
    """Deletes by users starting with ``users_prefix`` made outside their own tenure as
    holder of record (``expiry``: outside their windows of ability).

    Every delete counts, whatever its HTTP code: a request is an action. Pass only the
    deletions the check is about (e.g. the test's namespaces). This is the Lease model's
    ``unfenced`` question (``zoneproof.measure.lease``) asked of audited deletes.
    """
    history = LeaseHistory(observations(events))
    return [UnfencedDelete(d, history.holder_at(d.at)) for d in deletions
            if d.user.startswith(users_prefix)
            and not history.fenced(d.user, d.at, tolerance_s, expiry=expiry)]


def deletes_not_after_own_lease_write(deletions: Iterable[PodDeletion],
                                      writes: Iterable[LeaseRequest], *, users_prefix: str
                                      ) -> list[UnfencedDelete]:
    """Deletes by users starting with ``users_prefix`` whose author did not make the last
    successful Lease write the API server received before the delete (``holder``: who did,
    '' when nobody had written it yet)."""
    ordered = sorted(writes, key=lambda w: w.at)
    found = []
    for d in deletions:
        if not d.user.startswith(users_prefix):
            continue
        before = [w for w in ordered if w.at < d.at]
        last = before[-1].user if before else ""
        if last != d.user:
            found.append(UnfencedDelete(d, last, by_audit_order=True))
    return found
