"""Zone fault kinds: parameters, targets and the link targets their effect check reads."""

from __future__ import annotations

import pytest

from zoneproof import errors
from zoneproof.faults import registry
from zoneproof.faults.effects import Effect
from zoneproof.faults.zones import link_target, parse_link_target


def test_zone_kinds_are_registered_with_their_effects() -> None:
    kinds = registry.kinds()
    assert kinds["kill-zone-control-plane"].effects == {Effect.CONTROL_PLANE_DOWN}
    assert kinds["zone-partition"].effects == {Effect.ETCD_MEMBERS_DOWN}
    assert kinds["kubelet-apiserver-cut"].effects == {Effect.KUBELETS_STOPPED,
                                                      Effect.NODES_NOT_READY}
    assert kinds["zone-latency"].effects == {Effect.LINKS_SLOWED}
    assert all("zones" in {c.value for c in kinds[k].requires}
               for k in ("kill-zone-control-plane", "zone-partition", "zone-latency"))
    # the one-way cut needs no zoned control plane: kind's plain beds take it too
    assert {c.value for c in kinds["kubelet-apiserver-cut"].requires} == {"kubelet-links",
                                                                          "destructive"}


def test_link_targets_round_trip_and_refuse_other_names() -> None:
    target = link_target("zone-a", "zone-b", 250)
    assert target == "zone-a<->zone-b+250ms"
    assert parse_link_target(target) == ("zone-a", "zone-b", 250)
    assert parse_link_target("zone-a-node-1") is None
    assert parse_link_target("etcd-zone-a") is None


@pytest.mark.parametrize("arguments", [{"latency_ms": 0}, {"latency_ms": 10, "jitter_ms": 20},
                                       {"latency_ms": 10, "jitter_ms": -1}])
def test_latency_must_be_positive_and_jitter_within_it(arguments: dict[str, int]) -> None:
    with pytest.raises(errors.ConfigError, match="latency_ms must be >= 1"):
        registry.build("zone-latency", arguments)
