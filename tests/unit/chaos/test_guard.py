"""An experiment's needs are known before it starts; a cluster that lacks them is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from zoneproof import errors
from zoneproof.chaos import guard
from zoneproof.cluster.existing import ExistingCluster
from zoneproof.cluster.interface import Capability

CHAOS = Path(__file__).parents[3] / "chaos"


def _experiment(stem: str) -> dict[str, object]:
    loaded: dict[str, object] = yaml.safe_load((CHAOS / f"{stem}.yaml").read_text())
    return loaded


def _plan(stem: str) -> guard.FaultPlan:
    return guard.FaultPlan.of(_experiment(stem))


def test_needs_name_each_fault_activity() -> None:
    wanted = guard.needs(_plan("zone-outage"))
    assert wanted == {"zone-a-outage": frozenset({Capability.STOP_KUBELET,
                                                   Capability.DESTRUCTIVE})}
    assert guard.needs(_plan("etcd-quorum-loss"))  # etcd members
    assert all(Capability.DESTRUCTIVE in n for stem in ("webhook-down", "zone-drain")
               for n in guard.needs(_plan(stem)).values())


@pytest.mark.parametrize("stem", sorted(p.stem for p in CHAOS.glob("*.yaml")))
def test_a_users_cluster_without_allow_destructive_refuses_every_experiment(stem: str) -> None:
    existing = ExistingCluster(Path("/nonexistent/kubeconfig"), allow_destructive=False)
    with pytest.raises(errors.FaultError, match=r"refused before any of its actions ran.*"
                                                r"destructive.*--allow-destructive"):
        guard.check(_plan(stem), existing, stem)


def test_allowed_still_needs_the_faults_capabilities() -> None:
    allowed = ExistingCluster(Path("/nonexistent/kubeconfig"), allow_destructive=True)
    guard.check(_plan("webhook-down"), allowed, "webhook-down")  # component faults only
    with pytest.raises(errors.FaultError, match=r"stop-kubelet.*local or kind"):
        guard.check(_plan("zone-outage"), allowed, "zone-outage")
