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

No clock at all (``deletes_by_non_holders``, what the conformance suites judge by): the API
server audits both the Lease writes (with the holder each left) and the deletes, and its
record orders them (``audit.ApiOrder``: revisions, else its own received/completed
stamps). The holder of record at a delete is the holder the last Lease write before it
left; a delete by anyone else (e.g. a catch-up made milliseconds *before* taking the Lease
over, or while a watcher had not yet seen the take-over) was made without the Lease. A
delete whose order against a Lease write the record cannot decide is returned as
undecided, never judged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zoneproof.measure.audit import ApiOrder, LeaseRequest, PodDeletion
from zoneproof.measure.lease import CLOCK_TOLERANCE_S, LeaseHistory, Tenure, observations
from zoneproof.measure.timeline import Event

__all__ = ["CLOCK_TOLERANCE_S", "Tenure", "UnfencedDelete", "deletes_by_non_holders",
           "holder_at", "tenures", "unfenced_deletes"]


@dataclass(frozen=True, slots=True)
class UnfencedDelete:
    """An audited delete by a replica that did not hold the Lease then."""

    deletion: PodDeletion
    holder: str
    """Who held the Lease at that moment ('' when nobody did or nothing was recorded)."""
    by_audit_order: bool = False
    """Judged by the API server's order: ``holder`` is what the last Lease write before it
    left."""

    def describe(self) -> str:
        """One line for an assertion message."""
        d = self.deletion
        what = f"{d.user} deleted {d.namespace}/{d.pod} at {d.at.isoformat()} (HTTP {d.code})"
        if self.by_audit_order:
            held = (f"{self.holder!r} held it" if self.holder
                    else "nobody held it (free, or never written)")
            return (f"{what} without holding the Lease: by the API server's order (the last "
                    f"Lease write before that delete) {held}")
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


def _ordered(writes: Iterable[LeaseRequest]) -> list[LeaseRequest]:
    """Successful Lease writes in the API server's order: by revision when every one has
    one, else by when it received them (a successful write on one object was made with
    the result of the one before it, so it was received after that one took effect)."""
    found = [w for w in writes if w.renewed]
    if all(w.where.revision is not None for w in found):
        return sorted(found, key=lambda w: (w.where.revision or 0, w.at))
    return sorted(found, key=lambda w: w.at)


def holder_at(at: ApiOrder, writes: Iterable[LeaseRequest]) -> str | None:
    """The Lease's holder of record at ``at`` by the API server's order: what the last
    successful write before it left ('' free or never written); None when a write whose
    order against ``at`` the record cannot decide would change the answer."""
    ordered = _ordered(writes)
    before = [w for w in ordered if w.where.before(at) is True]
    holder = before[-1].holder_after if before else ""
    unsure = [w for w in ordered if w.where.before(at) is None]
    if any(w.holder_after != holder for w in unsure):
        return None
    return holder


def deletes_by_non_holders(deletions: Iterable[PodDeletion], writes: Iterable[LeaseRequest],
                           *, users_prefix: str
                           ) -> tuple[list[UnfencedDelete], list[PodDeletion]]:
    """Deletes by users starting with ``users_prefix`` made while someone else (or nobody)
    was the Lease's holder of record by the API server's order, and the deletes whose
    order against the Lease writes the record cannot decide (to be reported, not judged).
    Every delete counts, whatever its HTTP code: a request is an action."""
    writes = list(writes)
    found, undecided = [], []
    for d in deletions:
        if not d.user.startswith(users_prefix):
            continue
        holder = holder_at(d.where, writes)
        if holder is None:
            undecided.append(d)
        elif holder != d.user:
            found.append(UnfencedDelete(d, holder, by_audit_order=True))
    return found, undecided
