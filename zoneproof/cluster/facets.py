"""A cluster's facets by Capability, and the one refusal that names who can.

``facet(cluster, Capability.ETCD_MEMBERS)`` is the cluster seen as ``EtcdMembers``; a cluster
without that capability gets FaultError naming the installed backends that have it (from
the registry). ``require`` is the same check for several capabilities at once (faults);
``unmet`` says the same without raising (a test whose premise is a capability skips with it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, cast, overload

from zoneproof import errors
from zoneproof.cluster import registry
from zoneproof.cluster.interface import (
    Capability,
    Cluster,
    ClusterDns,
    ControlPlane,
    EtcdMembers,
    Images,
    KubeletLinks,
    Kubelets,
    NodeMachines,
    Zones,
)

__all__ = ["FACETS", "MEANING", "audit_unmet", "facet", "require", "unmet"]

Facet = (Kubelets | NodeMachines | EtcdMembers | ControlPlane | Images | Zones | KubeletLinks
         | ClusterDns)

#: Capability → the Protocol a cluster with it implements (DESTRUCTIVE is a permission).
FACETS: dict[Capability, type[Facet]] = {
    Capability.STOP_KUBELET: Kubelets,
    Capability.NODE_CONTAINERS: NodeMachines,
    Capability.ETCD_MEMBERS: EtcdMembers,
    Capability.CONTROL_PLANE: ControlPlane,
    Capability.LOAD_IMAGES: Images,
    Capability.ZONES: Zones,
    Capability.KUBELET_LINKS: KubeletLinks,
    Capability.CLUSTER_DNS: ClusterDns,
}

#: What a cluster lacking the capability cannot give, in the words a skip reason needs.
MEANING: dict[Capability, str] = {
    Capability.STOP_KUBELET: "no way to stop its nodes' kubelets",
    Capability.NODE_CONTAINERS: "its nodes are not machines zoneproof can stop, start or pause",
    Capability.ETCD_MEMBERS: "its etcd members are not reachable by zoneproof (none to see, "
                             "kill or restart)",
    Capability.CONTROL_PLANE: "its control plane is not reachable as processes (kube-apiserver, "
                              "kcm, the scheduler cannot be killed and restarted)",
    Capability.LOAD_IMAGES: "images cannot be loaded into its nodes without a registry",
    Capability.ZONES: "its zones are no failure domains zoneproof can take down or cut off "
                      "(no control-plane replica and etcd member per zone, no links between "
                      "zones to cut or slow)",
    Capability.KUBELET_LINKS: "its kubelets' links to the API server cannot be cut while "
                              "they keep running (no network of its own between them)",
    Capability.CLUSTER_DNS: "its cluster DNS is no CoreDNS Deployment (kube-system/coredns) "
                            "zoneproof takes down, or its nodes run no image for a workload "
                            "that resolves names (nothing is pulled)",
    Capability.DESTRUCTIVE: "faults are not allowed on it",
}


@overload
def facet(cluster: Cluster, capability: Literal[Capability.STOP_KUBELET]) -> Kubelets: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.NODE_CONTAINERS]) -> NodeMachines: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.ETCD_MEMBERS]) -> EtcdMembers: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.CONTROL_PLANE]) -> ControlPlane: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.LOAD_IMAGES]) -> Images: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.ZONES]) -> Zones: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.KUBELET_LINKS]) -> KubeletLinks: ...
@overload
def facet(cluster: Cluster, capability: Literal[Capability.CLUSTER_DNS]) -> ClusterDns: ...
def facet(cluster: Cluster, capability: Capability) -> Facet:
    """``cluster`` as the facet of ``capability``; FaultError names the backends that have it."""
    if capability not in FACETS:
        raise ValueError(f"{capability.value} is a permission, not a facet: use require()")
    require(cluster, (capability,), what=capability.value)
    return cast(Facet, cluster)


def require(cluster: Cluster, capabilities: Iterable[Capability], *, what: str) -> None:
    """Raise FaultError unless ``cluster`` has every one of ``capabilities`` (``unmet``'s
    message)."""
    if (reason := unmet(cluster, capabilities, what=what)) is not None:
        raise errors.FaultError(reason)


def unmet(cluster: Cluster, capabilities: Iterable[Capability], *, what: str) -> str | None:
    """None if ``cluster`` has every one of ``capabilities``; else what asked (``what``)
    needs, what the cluster lacks and means, and for each the installed backends that have
    it (or the flag that grants it)."""
    missing = sorted(set(capabilities) - cluster.capabilities, key=lambda c: c.value)
    if not missing:
        return None
    who = "; ".join(_who_has(capability, len(missing) > 1) for capability in missing)
    return (f"{what} needs {', '.join(c.value for c in missing)}, which cluster "
            f"{cluster.name!r} of the {cluster.backend} backend does not have: {who}")


#: Capabilities a user's cluster gains with --allow-destructive, and what the flag does.
_GRANTED = {Capability.DESTRUCTIVE: "allows it",
            Capability.STOP_KUBELET: "installs the node agent that does it",
            Capability.KUBELET_LINKS: "installs the node agent that does it (nftables in each "
                                      "node's namespaces)",
            Capability.CLUSTER_DNS: "gives it where kube-system/coredns runs (the resolver "
                                    "workload runs the node agent's image)"}


def _who_has(capability: Capability, prefixed: bool) -> str:
    owners = registry.backends_with(capability)
    text = MEANING[capability] + "; " + (f"the {' or '.join(owners)} backend has it" if owners
                                         else "no installed backend has it")
    if capability in _GRANTED:
        text += ("; on a cluster you own, --allow-destructive (pytest: --zp-allow-destructive) "
                 + _GRANTED[capability])
    return f"{capability.value}: {text}" if prefixed else text


def audit_unmet(cluster: Cluster, *, what: str) -> str | None:
    """None if ``cluster``'s API server audit log is readable; else why ``what`` (judged from
    it: who deleted what, in which order) cannot be judged there."""
    if cluster.audit_log() is not None:
        return None
    return (f"{what} is judged from the API server's audit log (who did what, in which order), "
            f"which cluster {cluster.name!r} of the {cluster.backend} backend does not let "
            "zoneproof read: run it on a bed zoneproof makes (--backend local, or kind with one "
            "control plane)")
