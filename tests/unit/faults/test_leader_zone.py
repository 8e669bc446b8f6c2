"""The zone a zone outage of ``controller-leader`` takes down: where the Lease holder runs."""

from typing import Any

import pytest

from zoneproof import errors
from zoneproof.faults import node

BY_ZONE = {"zone-a": ["a1"], "zone-b": ["b1"], "zone-c": ["c1"]}


class _Replicas:
    """What ``leader_zone`` asks of the controller's replicas (a test double)."""

    def __init__(self, holder: str, nodes: dict[str, str], alive: tuple[str, ...] = ()) -> None:
        self._holder, self._nodes, self._alive = holder, nodes, alive
        self.identities = list(nodes)

    def holder(self) -> str:
        return self._holder

    def node_of(self, identity: str) -> str:
        return self._nodes.get(identity, "")

    def alive(self, identity: str) -> bool:
        return identity in self._alive


def _zone(replicas: Any) -> tuple[str, str, str]:
    return node.leader_zone(replicas, BY_ZONE)


def test_the_zone_is_the_lease_holders_pods() -> None:
    replicas = _Replicas("hac-2", {"hac-1": "a1", "hac-2": "c1"}, alive=("hac-1", "hac-2"))
    assert _zone(replicas) == ("zone-c", "hac-2", "c1")


def test_with_the_lease_free_it_is_the_first_live_replicas() -> None:
    """A controller that never takes the Lease: every replica acts, the first one's zone."""
    replicas = _Replicas("", {"hac-1": "a1", "hac-2": "b1"}, alive=("hac-2",))
    assert _zone(replicas) == ("zone-b", "hac-2", "b1")


@pytest.mark.parametrize("replicas", [
    _Replicas("zp-hac-0", {"zp-hac-0": ""}, alive=("zp-hac-0",)),  # a host process
    _Replicas("hac-1", {"hac-1": "control-plane"}, alive=("hac-1",)),  # no zone's node
    _Replicas("", {}),  # nobody
])
def test_a_holder_on_no_zones_node_is_refused_naming_the_fix(replicas: _Replicas) -> None:
    with pytest.raises(errors.FaultError, match="--zp-components in-cluster"):
        _zone(replicas)


def test_zone_of() -> None:
    assert node.zone_of("b1", BY_ZONE) == "zone-b"
    assert node.zone_of("", BY_ZONE) == node.zone_of("x", BY_ZONE) == ""
