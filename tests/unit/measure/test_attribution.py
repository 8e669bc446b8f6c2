"""Attribution by the API server's record: the expiry model and early take-overs."""

import datetime as dt

from zoneproof.measure import ApiOrder, LeaseRequest, PodDeletion, attribution

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _at(s: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def _write(s: float, user: str, holder: str, revision: int, *, duration: float = 6.0,
           renewed: float | None = None) -> LeaseRequest:
    return LeaseRequest(_at(s), user, "update", 200, ApiOrder(_at(s), _at(s + 0.01), revision),
                        holder, duration, _at(s if renewed is None else renewed))


def _delete(s: float, user: str, revision: int | None) -> PodDeletion:
    return PodDeletion(_at(s), user, "ns", "p", 200 if revision else 404,
                       order=ApiOrder(_at(s), _at(s + 0.01), revision))


def test_a_holder_acting_on_its_expired_lease_is_caught_only_by_the_expiry_model() -> None:
    """a renews until 3, then stops; nobody takes over: its Lease expired at 3 + 6 = 9."""
    writes = [_write(1, "a", "a", 10), _write(2, "a", "a", 11), _write(3, "a", "a", 12)]
    late = [_delete(5, "a", 13), _delete(20, "a", 14)]
    found, undecided = attribution.deletes_by_non_holders(late, writes, users_prefix="a")
    assert (found, undecided) == ([], [])
    found, _ = attribution.deletes_by_non_holders(late, writes, users_prefix="a", expiry=True)
    assert [f.deletion.at for f in found] == [_at(20)] and found[0].expired
    assert "let expire" in found[0].describe()


def test_a_take_over_before_the_holder_could_have_expired_is_early() -> None:
    renewing = [_write(1, "a", "a", 10), _write(3, "a", "a", 11)]
    assert attribution.early_takeovers([*renewing, _write(5, "b", "b", 12)]) != []
    assert attribution.early_takeovers([*renewing, _write(9.1, "b", "b", 12)]) == []
    released = [*renewing, _write(4, "a", "", 12, duration=1), _write(4.5, "b", "b", 13)]
    assert attribution.early_takeovers(released) == []
    # a taker may count from the renewTime the holder wrote, if earlier than its arrival
    clock = [_write(1, "a", "a", 10, renewed=0.2), _write(6.5, "b", "b", 11)]
    assert attribution.early_takeovers(clock) == []
