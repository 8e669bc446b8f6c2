"""What a zone spread of maxSkew 1 keeps available when one zone is lost (pure)."""

from __future__ import annotations

import pytest

from zoneproof.traffic.tolerant import guaranteed_available


@pytest.mark.parametrize(("replicas", "zones", "kept"), [
    (3, 3, 2),  # one per zone: lose one
    (2, 3, 1),  # the webhook's table value: one of two may sit in the lost zone
    (4, 3, 2),  # 2/1/1: the zone with 2 may go
    (6, 3, 4),
    (5, 2, 2),  # 3/2
    (1, 3, 0),
    (3, 0, 0),  # no zones: nothing is guaranteed
])
def test_guaranteed_available(replicas: int, zones: int, kept: int) -> None:
    assert guaranteed_available(replicas, zones) == kept
