"""A workload the webhook makes zone tolerant: deployed, and its availability and spread
while a zone is down and after."""

from typing import Any

from kubernetes import client

from zoneproof._util import waiting
from zoneproof.chaos import experiment, session
from zoneproof.traffic import tolerant

__all__ = ["deploy_zone_tolerant_workload", "expect_zone_tolerant_available",
           "expect_zone_tolerant_spread"]


def _tolerant_namespace(run: experiment.ExperimentRun) -> str:
    return experiment.named(run, "zp-tolerant")


def _node_zones(run: experiment.ExperimentRun) -> dict[str, str]:
    return {node: zone for zone, nodes in run.cluster.nodes_by_zone().items() for node in nodes}


def deploy_zone_tolerant_workload(replicas: int = 3, timeout_s: float = 90.0) -> dict[str, Any]:
    """A ``server`` Deployment in a namespace the webhook (deploy it first) makes zone
    tolerant; fails unless the webhook added a zone spread. Waits until every replica is
    Ready; returns the spread and Ready pods per zone."""
    run = session.current()
    run.webhook.get()
    namespace = run.tolerant.start(_tolerant_namespace(run))
    tolerant.apply(run.api, namespace=namespace, zones=sorted(run.cluster.nodes_by_zone()),
                   replicas=replicas)
    spread = tolerant.zone_spread(run.api, namespace)
    zones = _node_zones(run)

    def probe() -> tuple[bool, dict[str, int]]:
        counts = tolerant.ready_per_zone(run.api, namespace, zones)
        return sum(counts.values()) == spread["replicas"], counts

    placed = waiting.wait_for(
        probe, what=f"{spread['replicas']} Ready pods of {namespace}/{tolerant.NAME}",
        timeout_s=timeout_s, interval_s=0.5, ignore=(client.ApiException,))
    return {"spread": spread, "ready_per_zone": placed}


def expect_zone_tolerant_available(avoid_zone: str, min_available: int = 0,
                                   timeout_s: float = 30.0) -> dict[str, int]:
    """Wait until enough pods of the zone-tolerant workload are Ready outside ``avoid_zone``:
    ``min_available``, or (0) what its zone spread guarantees, replicas - ceil(replicas /
    zones) and at least 1. Ready pods per zone."""
    run = session.current()
    namespace, zones = _tolerant_namespace(run), _node_zones(run)
    if min_available <= 0:
        replicas = tolerant.zone_spread(run.api, namespace)["replicas"]
        min_available = max(1, tolerant.guaranteed_available(replicas, len(set(zones.values()))))

    def probe() -> tuple[bool, dict[str, int]]:
        counts = tolerant.ready_per_zone(run.api, namespace, zones)
        return sum(n for z, n in counts.items() if z != avoid_zone) >= min_available, counts

    return waiting.wait_for(probe, what=f">= {min_available} Ready pods of {namespace}/"
                            f"{tolerant.NAME} outside {avoid_zone}", timeout_s=timeout_s,
                            interval_s=0.5, ignore=(client.ApiException,))


def expect_zone_tolerant_spread(timeout_s: float = 90.0) -> dict[str, int]:
    """Wait until every replica of the zone-tolerant workload is Ready and the zones differ
    by at most the webhook's maxSkew; Ready pods per zone."""
    run = session.current()
    namespace, zones = _tolerant_namespace(run), _node_zones(run)
    spread = tolerant.zone_spread(run.api, namespace)

    def probe() -> tuple[bool, dict[str, int]]:
        counts = tolerant.ready_per_zone(run.api, namespace, zones)
        skew = max(counts.values()) - min(counts.values())
        return sum(counts.values()) == spread["replicas"] and skew <= spread["max_skew"], counts

    return waiting.wait_for(probe, what=f"{namespace}/{tolerant.NAME} Ready and spread with "
                            f"skew <= {spread['max_skew']}", timeout_s=timeout_s,
                            interval_s=0.5, ignore=(client.ApiException,))
