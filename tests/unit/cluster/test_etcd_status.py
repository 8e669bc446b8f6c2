"""etcd leadership read from the members' maintenance status (a stand-in pool answers)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zoneproof import errors
from zoneproof.cluster import _etcd


class _Answer:
    def __init__(self, body: dict[str, Any] | None) -> None:
        self.status = 200 if body is not None else 503
        self.data = json.dumps(body or {}).encode()


class _Pool:
    """Answers /v3/maintenance/status with the body given per client URL."""

    def __init__(self, bodies: dict[str, dict[str, Any] | None]) -> None:
        self.bodies = bodies

    def request(self, method: str, url: str, body: bytes = b"") -> _Answer:
        return _Answer(self.bodies[url.removesuffix("/v3/maintenance/status")])


URLS = {"etcd-0": "http://a", "etcd-1": "http://b", "etcd-2": "http://c"}


def _status(member_id: str, leader: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"header": {"member_id": member_id}}
    if leader is not None:
        body["leader"] = leader
    return body


def test_the_leader_is_the_member_whose_id_the_members_report() -> None:
    pool = _Pool({"http://a": _status("1", "2"), "http://b": _status("2", "2"),
                  "http://c": None})
    assert _etcd.leader(URLS, "bed", pool) == "etcd-1"  # type: ignore[arg-type]


def test_members_without_quorum_omit_the_leader_field_and_there_is_no_leader() -> None:
    """Without quorum the JSON gateway leaves the zero leader id out: no leader, a
    FaultError (the health recorder's "no leader now"), not a KeyError."""
    pool = _Pool({"http://a": _status("1", None), "http://b": None, "http://c": None})
    with pytest.raises(errors.FaultError, match="no leader now"):
        _etcd.leader(URLS, "bed", pool)  # type: ignore[arg-type]
