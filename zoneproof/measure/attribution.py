"""Attribution: was every audited pod delete by a replica made while that replica held the
Lease, and did anyone take the Lease over too early? Decided from the API server's record
alone.

Pure: audited deletions (``audit.pod_deletions``) and audited Lease writes
(``audit.lease_writes``, each with the holder and the duration it left) in, violations out.
No watcher and no client clock enters, so no tolerance: the API server's record orders them
(``audit.ApiOrder``: revisions, else its own received/completed stamps). The holder of
record at a delete is what the last Lease write before it left; a delete by anyone else
(e.g. a catch-up milliseconds *before* taking the Lease over) was made without the Lease,
and with ``expiry`` one made after the deleter's own last write plus its stated duration
(not renewed in time, nobody took over) too. A delete whose order against a Lease write
the record cannot decide is returned as undecided, never judged. A take-over counts as
early when it came before the previous holder's last write plus its stated duration.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from zoneproof.measure.audit import ApiOrder, LeaseRequest, PodDeletion

__all__ = ["UnfencedDelete", "deletes_by_non_holders", "early_takeovers", "holder_at"]


@dataclass(frozen=True, slots=True)
class UnfencedDelete:
    """An audited delete by a replica that did not hold the Lease then."""

    deletion: PodDeletion
    holder: str
    """Who held the Lease at that moment by the API server's order: what the last Lease
    write before the delete left ('' when nobody did)."""
    expired: bool = False
    """By the API server's order it was the holder, but its last write's lease duration
    had run out."""

    def describe(self) -> str:
        """One line for an assertion message."""
        d = self.deletion
        what = f"{d.user} deleted {d.namespace}/{d.pod} at {d.at.isoformat()} (HTTP {d.code})"
        if self.expired:
            return (f"{what} as holder of record of a Lease its own last write had let "
                    "expire (not renewed within its leaseDuration, by the API server's clock)")
        held = (f"{self.holder!r} held it" if self.holder
                else "nobody held it (free, or never written)")
        return (f"{what} without holding the Lease: by the API server's order (the last "
                f"Lease write before that delete) {held}")


def _ordered(writes: Iterable[LeaseRequest]) -> list[LeaseRequest]:
    """Successful Lease writes in the API server's order: by revision when every one has
    one, else by when it received them (a successful write on one object was made with
    the result of the one before it, so it was received after that one took effect)."""
    found = [w for w in writes if w.renewed]
    if all(w.where.revision is not None for w in found):
        return sorted(found, key=lambda w: (w.where.revision or 0, w.at))
    return sorted(found, key=lambda w: w.at)


def _last_before(at: ApiOrder, writes: list[LeaseRequest]
                 ) -> tuple[LeaseRequest | None, bool]:
    """The last of ordered ``writes`` before ``at``, and whether the record decides it (a
    write it cannot order against ``at`` that would leave another holder does not)."""
    before = [w for w in writes if w.where.before(at) is True]
    last = before[-1] if before else None
    holder = last.holder_after if last else ""
    unsure = [w for w in writes if w.where.before(at) is None]
    return last, not any(w.holder_after != holder for w in unsure)


def holder_at(at: ApiOrder, writes: Iterable[LeaseRequest]) -> str | None:
    """The Lease's holder of record at ``at`` by the API server's order: what the last
    successful write before it left ('' free or never written); None when a write whose
    order against ``at`` the record cannot decide would change the answer."""
    last, decided = _last_before(at, _ordered(writes))
    if not decided:
        return None
    return last.holder_after if last else ""


def deletes_by_non_holders(deletions: Iterable[PodDeletion], writes: Iterable[LeaseRequest],
                           *, users_prefix: str, expiry: bool = False
                           ) -> tuple[list[UnfencedDelete], list[PodDeletion]]:
    """Deletes by users starting with ``users_prefix`` made while someone else (or nobody)
    was the Lease's holder of record by the API server's order (``expiry``: also those
    received after the deleter's own last write plus the lease duration it stated: it
    could no longer act), and the deletes whose order against the Lease writes the record
    cannot decide (to be reported, not judged). Every delete counts, whatever its HTTP
    code: a request is an action."""
    writes = list(writes)
    ordered = _ordered(writes)
    found, undecided = [], []
    for d in deletions:
        if not d.user.startswith(users_prefix):
            continue
        last, decided = _last_before(d.where, ordered)
        holder = last.holder_after if last else ""
        if not decided:
            undecided.append(d)
        elif holder != d.user:
            found.append(UnfencedDelete(d, holder))
        elif expiry and last is not None and last.duration_s is not None and \
                d.where.received > last.where.completed + dt.timedelta(seconds=last.duration_s):
            found.append(UnfencedDelete(d, holder, expired=True))
    return found, undecided


def early_takeovers(writes: Iterable[LeaseRequest]) -> list[tuple[LeaseRequest, LeaseRequest]]:
    """(previous, taking) for each write that took the Lease from another holder before
    that holder's last write plus the lease duration it stated had passed, by the API
    server's clock (counted from the earlier of when the server received that write and
    the renewTime it carries: a taker may count from either). A release ends the wait."""
    found = []
    ordered = _ordered(writes)
    for previous, taking in zip(ordered, ordered[1:], strict=False):
        holder = previous.holder_after
        if not holder or taking.holder_after in ("", holder) or previous.duration_s is None:
            continue
        since = min(previous.at, previous.renewed_at or previous.at)
        if taking.at <= since + dt.timedelta(seconds=previous.duration_s):
            found.append((previous, taking))
    return found
