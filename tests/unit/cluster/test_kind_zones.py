"""KindCluster.nodes_by_zone: the workers of each zone; an HA control plane's nodes carry a
zone label too and are never among them (a zone's worker fault must not stop a member)."""

from __future__ import annotations

import pytest

from zoneproof.cluster._common import ApiCluster
from zoneproof.cluster.kind.cluster import KindCluster


def test_control_plane_nodes_with_a_zone_are_not_workers_of_that_zone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    labelled = {"zone-a": ["kc-control-plane", "kc-worker"], "zone-b": ["kc-control-plane2", "kc-worker2"],
                "zone-c": ["kc-control-plane3"], "": []}
    monkeypatch.setattr(ApiCluster, "nodes_by_zone", lambda self: labelled)
    monkeypatch.setattr(KindCluster, "control_plane_zones", lambda self: {
        "kc-control-plane": "zone-a", "kc-control-plane2": "zone-b", "kc-control-plane3": "zone-c"})
    cluster = object.__new__(KindCluster)
    assert cluster.nodes_by_zone() == {"zone-a": ["kc-worker"], "zone-b": ["kc-worker2"]}
