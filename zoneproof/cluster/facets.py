"""A cluster's facets by Capability, and the one refusal that names who can.

``facet(cluster, Capability.ETCD_MEMBERS)`` is the cluster seen as ``EtcdMembers``; a cluster
without that capability gets FaultError naming the installed backends that have it (from
the registry). ``require`` is the same check for several capabilities at once (faults).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, cast, overload

from zoneproof import errors
from zoneproof.cluster import registry
from zoneproof.cluster.interface import (
    Capability,
    Cluster,
    ControlPlane,
    EtcdMembers,
    Images,
    Kubelets,
    NodeMachines,
)

__all__ = ["FACETS", "facet", "require"]

Facet = Kubelets | NodeMachines | EtcdMembers | ControlPlane | Images

#: Capability → the Protocol a cluster with it implements (DESTRUCTIVE is a permission).
FACETS: dict[Capability, type[Facet]] = {
    Capability.STOP_KUBELET: Kubelets,
    Capability.NODE_CONTAINERS: NodeMachines,
    Capability.ETCD_MEMBERS: EtcdMembers,
    Capability.CONTROL_PLANE: ControlPlane,
    Capability.LOAD_IMAGES: Images,
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
def facet(cluster: Cluster, capability: Capability) -> Facet:
    """``cluster`` as the facet of ``capability``; FaultError names the backends that have it."""
    if capability not in FACETS:
        raise ValueError(f"{capability.value} is a permission, not a facet: use require()")
    require(cluster, (capability,), what=capability.value)
    return cast(Facet, cluster)


def require(cluster: Cluster, capabilities: Iterable[Capability], *, what: str) -> None:
    """Raise FaultError unless ``cluster`` has every one of ``capabilities``.

    The message names what asked (``what``), the missing capabilities, and for each the
    installed backends that have it.
    """
    missing = sorted(set(capabilities) - cluster.capabilities, key=lambda c: c.value)
    if not missing:
        return
    who = "; ".join(_who_has(capability, len(missing) > 1) for capability in missing)
    raise errors.FaultError(
        f"{what} needs {', '.join(c.value for c in missing)}, which cluster {cluster.name!r} "
        f"of the {cluster.backend} backend does not have: {who}")


def _who_has(capability: Capability, prefixed: bool) -> str:
    owners = registry.backends_with(capability)
    text = (f"the {' or '.join(owners)} backend has it" if owners
            else "no installed backend has it")
    if capability is Capability.DESTRUCTIVE:
        text += ("; on a cluster you own, --allow-destructive (pytest: --zp-allow-destructive) "
                 "allows it")
    return f"{capability.value}: {text}" if prefixed else text
