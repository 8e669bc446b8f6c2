"""The cluster DNS down: CoreDNS scaled to nothing, so pods resolve no name (seed 004: "no DNS").

The count it had is kept on its Deployment until the revert puts it back, so a run that
died mid-fault is repaired from the cluster itself (``cluster.cluster_dns.restore``: the
run's keeper, the kind bed's and the chaos suite's restore call it).
That the fault took effect is seen by the resolver pods (``traffic.resolver``): their
readiness is a name lookup through the cluster DNS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kubernetes import client

from zoneproof._util import waiting
from zoneproof.cluster import cluster_dns
from zoneproof.cluster.interface import Capability
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect

__all__ = ["DnsOutage"]

_GONE_TIMEOUT_S = 60.0


@registry.kind
@dataclass(frozen=True, slots=True)
class DnsOutage:
    """Scale the cluster's CoreDNS Deployment to 0 and wait until its last pod is gone:
    pods resolve no name while the API server, the kubelets and every component keep
    running. Revert scales it back to the replicas it had (it does not wait for them)."""

    name: ClassVar[str] = "dns-outage"
    requires: ClassVar[frozenset[Capability]] = frozenset({Capability.CLUSTER_DNS,
                                                           Capability.DESTRUCTIVE})
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.NAMES_UNRESOLVED})

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        cluster_dns.read(client.AppsV1Api(context.api_client()), self.name)
        return ("/".join(cluster_dns.COREDNS),)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        api = context.api_client()
        apps = client.AppsV1Api(api)
        deployment = cluster_dns.read(apps, self.name)
        cluster_dns.hold(context.cluster.kubeconfig)
        cluster_dns.take_down(apps, deployment)
        core = client.CoreV1Api(api)
        selector = ",".join(f"{k}={v}" for k, v in
                            (deployment.spec.selector.match_labels or {}).items())

        def gone() -> tuple[bool, list[str]]:
            left = [p.metadata.name for p in
                    core.list_namespaced_pod(cluster_dns.COREDNS[0],
                                             label_selector=selector).items]
            return not left, left

        waiting.wait_for(gone, what=f"every pod of {targets[0]} gone", timeout_s=_GONE_TIMEOUT_S,
                         interval_s=0.5, ignore=(client.ApiException,))

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        cluster_dns.restore(context.api_client())
        cluster_dns.release(context.cluster.kubeconfig)
