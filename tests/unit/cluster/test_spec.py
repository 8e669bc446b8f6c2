"""ClusterSpec and Timings validation."""

import pytest

from zoneproof import errors
from zoneproof.cluster.spec import ClusterSpec, Timings


def test_default_spec_is_valid_and_has_two_nodes_in_each_of_three_zones() -> None:
    spec = ClusterSpec().validate()
    assert spec.nodes_by_zone() == {
        "zone-a": ["zone-a-node-1", "zone-a-node-2"],
        "zone-b": ["zone-b-node-1", "zone-b-node-2"],
        "zone-c": ["zone-c-node-1", "zone-c-node-2"],
    }


def test_validate_collects_every_problem() -> None:
    spec = ClusterSpec(name="Bad_Name", zones=("a", "a"), nodes_per_zone=0, etcd_members=2,
                       region="bad region")
    with pytest.raises(errors.ConfigError) as caught:
        spec.validate()
    text = str(caught.value)
    for fragment in ("name 'Bad_Name'", "duplicates", "nodes_per_zone", "etcd_members",
                     "region 'bad region'"):
        assert fragment in text


def test_lease_duration_must_be_below_grace_period() -> None:
    problems = Timings(node_monitor_grace_period_s=4, node_lease_duration_s=4).problems()
    assert any("flap" in p for p in problems)


def test_etcd_election_timeout_is_a_stated_timing() -> None:
    assert any("5 x its heartbeat" in p for p in Timings(etcd_election_timeout_s=0.2).problems())
    upstream = Timings.upstream()
    assert not upstream.problems()
    assert (upstream.node_monitor_grace_period_s, upstream.etcd_election_timeout_s) == (50, 1)
    stored = ClusterSpec().to_dict()
    del stored["timings"]["etcd_election_timeout_s"]  # a bed made before it was stated
    assert ClusterSpec.from_dict(stored) == ClusterSpec()


def test_round_trip_through_dict() -> None:
    spec = ClusterSpec(name="x", zones=("z1",), nodes_per_zone=1,
                       timings=Timings(toleration_s=7))
    assert ClusterSpec.from_dict(spec.to_dict()) == spec


def test_a_spec_holds_no_backend_options() -> None:
    stored = {**ClusterSpec(name="x").to_dict(), "port_base": 21000, "kwok_per": "zone"}
    with pytest.raises(errors.ConfigError, match=r"unknown field\(s\) \['kwok_per', 'port_base'\]"):
        ClusterSpec.from_dict(stored)
    spec, others = ClusterSpec.from_stored(stored)
    assert spec == ClusterSpec(name="x")
    assert others == {"port_base": 21000, "kwok_per": "zone"}
