"""Argument handling of the activities: rejected before anything touches a cluster."""

from __future__ import annotations

from typing import Any

import pytest

from zoneproof import errors
from zoneproof.chaos import actions, experiment, guard, session
from zoneproof.chaos.activities import tolerant, webhook
from zoneproof.faults import (
    KillEtcdLeader,
    KillEtcdMember,
    KillEtcdMembers,
    StopKubelets,
    ZoneOutage,
)


@pytest.mark.parametrize("call, text", [
    (lambda: actions.inject_fault("kill-controller-leader", {"signal_name": "SIGSTOP"}),
     "SIGKILL or SIGTERM"),
    (lambda: actions.inject_fault("kill-etcd-quorum", {"count": 0}), "count must be >= 1"),
    (lambda: actions.start_history_traffic(read_mode="stale"),
     r"read_mode must be one of \['quorum', 'watch-cache', 'informer'\]"),
    (lambda: actions.inject_fault("zone-outage", {"zones": "zone-a"}),
     r"unknown parameters \['zones'\]; it takes \['freeze', 'zone'\]"),
    (lambda: actions.inject_fault("no-such-fault"), "unknown fault 'no-such-fault'"),
    (lambda: actions.deploy_workloads(replicas=0), "replicas must be >= 1"),
    (lambda: actions.deploy_workloads(pdb_max_unavailable=-1), "pdb_max_unavailable"),
    (lambda: actions.start_writer(interval_s=0), "interval_s must be > 0"),
])
def test_bad_arguments_raise_before_opening_a_run(call: Any, text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        call()
    assert session._open.run is None


def _planned(func: str, arguments: dict[str, Any]) -> Any:
    """The fault an activity ``func`` with ``arguments`` injects (None: not inject_fault)."""
    experiment = {"method": [{"name": "a", "provider": {
        "type": "python", "module": guard.ACTIONS_MODULE, "func": func, "arguments": arguments}}]}
    return guard.FaultPlan.of(experiment).faults.get("a")


def test_planned_fault_uses_the_kind_defaults() -> None:
    assert _planned("inject_fault", {"fault": "zone-outage"}) == ZoneOutage("zone-a")
    assert _planned("inject_fault", {"fault": "kill-etcd-member"}) == \
        KillEtcdMember("follower")
    assert _planned("inject_fault", {"fault": "kill-etcd-leader"}) == KillEtcdLeader()
    with pytest.raises(errors.ConfigError, match="use fault kill-etcd-leader"):
        _planned("inject_fault", {"fault": "kill-etcd-member",
                                               "parameters": {"role": "leader"}})
    assert _planned("inject_fault", {"fault": "kill-etcd-quorum"}) == \
        KillEtcdMembers(2)
    assert _planned("inject_fault", {
        "fault": "stop-kubelets", "parameters": {"nodes": ["n1"]}}) == StopKubelets(("n1",))
    assert _planned("deploy_workloads", {"replicas": 3}) is None


def test_an_experiment_registers_its_webhook_under_a_name_of_its_own() -> None:
    """On a cluster shared with the run's webhook under test (a user's), the experiment's
    registration neither replaces nor removes that one's."""
    from types import SimpleNamespace

    from zoneproof.specs.ha_config.registration import DEFAULT_CONFIGURATION_NAME

    run = SimpleNamespace(namespace="zp-chaos-717cf5", config=SimpleNamespace(namespace="zp-chaos"))
    name = webhook._configuration_name(run)  # type: ignore[arg-type]
    assert name == f"{DEFAULT_CONFIGURATION_NAME}-717cf5" != DEFAULT_CONFIGURATION_NAME


@pytest.mark.parametrize(("name", "ours"), [
    ("zp-chaos-717cf5", True), ("zp-admission-717cf5", True), ("zp-no-admission-717cf5", True),
    ("zp-writes-717cf5", True), ("zp-history-717cf5", True), ("zp-tolerant-717cf5", True),
    # another test's namespace (fixtures' zp-<test>-<digest>) on the same user's cluster
    ("zp-test-zone-spread-deployment-lands-two-pe-b93ccf", False), ("zp-w-test-x-123456", False),
    ("kube-system", False),
])
def test_the_restore_waits_only_for_the_experiments_own_namespaces(name: str, ours: bool) -> None:
    assert experiment.experiment_namespace(name, "zp-chaos") is ours


def test_every_namespace_an_experiment_makes_is_recognised_as_its_own() -> None:
    from types import SimpleNamespace

    run = SimpleNamespace(namespace="zp-chaos-717cf5", config=SimpleNamespace(namespace="zp-chaos"))
    made = [*webhook._admission_namespaces(run), tolerant._tolerant_namespace(run)]  # type: ignore[arg-type]
    assert made == ["zp-admission-717cf5", "zp-no-admission-717cf5", "zp-tolerant-717cf5"]
    assert all(experiment.experiment_namespace(name, "zp-chaos") for name in made)
