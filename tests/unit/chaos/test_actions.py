"""Argument handling of the activities: rejected before anything touches a cluster."""

from __future__ import annotations

from typing import Any, cast

import pytest

from zoneproof import errors
from zoneproof.chaos import actions, session
from zoneproof.faults import KillEtcdMember, KillEtcdMembers, StopKubelets, ZoneOutage
from zoneproof.traffic import workloads

BY_ZONE = {"zone-a": ["a2", "a1"], "zone-b": ["b1", "b2"], "zone-c": ["c1"]}


def test_pick_nodes_takes_zones_in_turn_without_repeats() -> None:
    assert actions._pick_nodes(BY_ZONE, 1, ["zone-b"]) == ["b1"]
    assert actions._pick_nodes(BY_ZONE, 3, []) == ["a1", "b1", "c1"]
    assert actions._pick_nodes(BY_ZONE, 5, []) == ["a1", "b1", "c1", "a2", "b2"]
    assert actions._pick_nodes(BY_ZONE, 2, ["zone-a", "zone-c"]) == ["a1", "c1"]


@pytest.mark.parametrize("count, zones, text", [
    (0, [], "count must be 1..5"), (6, [], "count must be 1..5"),
    (1, ["zone-x"], "unknown zones"), (2, ["zone-c"], "count must be 1..1"),
])
def test_pick_nodes_rejects(count: int, zones: list[str], text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        actions._pick_nodes(BY_ZONE, count, zones)


@pytest.mark.parametrize("call, text", [
    (lambda: actions.kill_controller_leader(signal_name="SIGSTOP"), "SIGKILL or SIGTERM"),
    (lambda: actions.deploy_workloads(replicas=0), "replicas must be >= 1"),
    (lambda: actions.deploy_workloads(pdb_max_unavailable=-1), "pdb_max_unavailable"),
    (lambda: actions.kill_etcd_members(count=0), "count must be >= 1"),
    (lambda: actions.start_writer(interval_s=0), "interval_s must be > 0"),
])
def test_bad_arguments_raise_before_opening_a_run(call: Any, text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        call()
    assert session._state.run is None


def test_planned_fault_uses_the_action_defaults() -> None:
    run = cast(session.Run, None)  # these builders do not touch the run
    assert actions.planned_fault(run, "zone_outage", {}) == ZoneOutage("zone-a")
    assert actions.planned_fault(run, "kill_etcd_member", {"role": "leader"}) == \
        KillEtcdMember("leader")
    assert actions.planned_fault(run, "kill_etcd_members", {}) == KillEtcdMembers(2)
    assert actions.planned_fault(run, "stop_kubelets", {"nodes": ["n1"]}) == StopKubelets(("n1",))
    assert actions.planned_fault(run, "deploy_workloads", {"replicas": 3}) is None


def test_planned_fault_rejects_unknown_arguments() -> None:
    with pytest.raises(TypeError, match="zones"):
        actions.planned_fault(cast(session.Run, None), "zone_outage", {"zones": "zone-a"})


def test_workload_labels_need_an_equality_selector() -> None:
    assert workloads.labels_of("app=noobaa, tier==db") == {"app": "noobaa", "tier": "db"}
    for bad in ("app in (x)", "", "!app"):
        with pytest.raises(errors.ConfigError, match="equality-based"):
            workloads.labels_of(bad)
