"""Facets by capability: handed out when a cluster has it, refused naming who has it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from zoneproof import cluster, errors
from zoneproof.cluster import facets
from zoneproof.cluster.existing import ExistingCluster
from zoneproof.cluster.interface import Capability, ControlPlaneProcess, Kubelets
from zoneproof.cluster.kind import KindCluster
from zoneproof.cluster.local import LocalCluster
from zoneproof.cluster.local.zoned import ZonedLocalCluster

#: Each backend's cluster classes (the local backend's zoned layout adds ZONES).
_CLUSTER_CLASSES = {"local": (LocalCluster, ZonedLocalCluster), "kind": (KindCluster,),
                    "existing": (ExistingCluster,)}


@dataclass
class FakeCluster:
    """Just what the lookup reads, and one facet's methods."""

    capabilities: frozenset[Capability]
    name: str = "bed"
    backend: str = "existing"
    stopped: list[str] = field(default_factory=list)

    def stop_kubelet(self, node: str) -> None:
        self.stopped.append(node)


def test_a_facet_is_the_cluster_seen_through_it() -> None:
    bed = FakeCluster(frozenset({Capability.STOP_KUBELET}))
    facets.facet(bed, Capability.STOP_KUBELET).stop_kubelet("n1")  # type: ignore[arg-type]
    assert bed.stopped == ["n1"]


@pytest.mark.parametrize(("capability", "who"), [
    (Capability.STOP_KUBELET, "no way to stop its nodes' kubelets; the local or kind backend "
                              "has it; on a cluster you own, --allow-destructive (pytest: "
                              "--zp-allow-destructive) installs the node agent that does it"),
    (Capability.ETCD_MEMBERS, "its etcd members are not reachable by zoneproof (none to see, "
                              "kill or restart); the local or kind backend has it"),
    (Capability.CONTROL_PLANE, "its control plane is not reachable as processes (kube-apiserver, "
                               "kcm, the scheduler cannot be killed and restarted); the local or "
                               "kind backend has it"),
    (Capability.NODE_CONTAINERS, "its nodes are not machines zoneproof can stop, start or "
                                 "pause; the kind backend has it"),
])
def test_a_missing_facet_names_the_backends_that_have_it(capability: Capability,
                                                         who: str) -> None:
    bed = FakeCluster(frozenset())
    with pytest.raises(errors.FaultError) as caught:
        facets.facet(bed, capability)  # type: ignore[arg-type, call-overload]
    assert str(caught.value) == (f"{capability.value} needs {capability.value}, which cluster "
                                 f"'bed' of the existing backend does not have: {who}")


def test_a_missing_permission_names_the_flag_that_grants_it() -> None:
    bed = FakeCluster(frozenset({Capability.STOP_KUBELET}))
    with pytest.raises(errors.FaultError, match=r"fault f needs destructive, stop-kubelet|"
                                                r"fault f needs destructive"):
        facets.require(bed, {Capability.DESTRUCTIVE}, what="fault f")  # type: ignore[arg-type]
    with pytest.raises(errors.FaultError) as caught:
        facets.require(bed, set(Capability), what="fault f")  # type: ignore[arg-type]
    text = str(caught.value)
    assert text.startswith("fault f needs cluster-dns, control-plane, destructive, etcd-members, "
                           "kubelet-links, load-images, "
                           "node-containers, zones, which cluster 'bed'")
    assert "destructive: faults are not allowed on it; the local or kind backend has it; on a " \
           "cluster you own, --allow-destructive (pytest: --zp-allow-destructive) allows it" in text
    assert "node-containers: its nodes are not machines zoneproof can stop, start or pause; " \
           "the kind backend has it" in text
    facets.require(bed, {Capability.STOP_KUBELET}, what="fault f")  # type: ignore[arg-type]


@pytest.mark.parametrize(("have", "needs", "skipped"), [
    # a user's cluster with the node agent: kubelet stops yes, etcd and control plane no
    ({Capability.DESTRUCTIVE, Capability.STOP_KUBELET}, {Capability.STOP_KUBELET}, False),
    ({Capability.DESTRUCTIVE, Capability.STOP_KUBELET}, {Capability.ETCD_MEMBERS}, True),
    ({Capability.DESTRUCTIVE, Capability.STOP_KUBELET}, {Capability.CONTROL_PLANE}, True),
    # without --allow-destructive: nothing
    (set(), {Capability.STOP_KUBELET}, True),
    (set(), set(), False),
    # a bed zoneproof makes has them all
    (set(Capability), {Capability.ETCD_MEMBERS, Capability.CONTROL_PLANE}, False),
])
def test_unmet_is_none_exactly_when_every_needed_capability_is_there(
        have: set[Capability], needs: set[Capability], skipped: bool) -> None:
    bed = FakeCluster(frozenset(have))
    reason = facets.unmet(bed, needs, what="test t")  # type: ignore[arg-type]
    assert (reason is not None) == skipped
    if reason is not None:
        assert reason.startswith("test t needs ")
        assert all(facets.MEANING[c] in reason for c in needs - have), reason


def test_unmet_control_plane_says_it_is_not_reachable_as_processes() -> None:
    bed = FakeCluster(frozenset({Capability.DESTRUCTIVE, Capability.STOP_KUBELET}))
    reason = facets.unmet(bed, {Capability.CONTROL_PLANE}, what="t")  # type: ignore[arg-type]
    assert reason is not None and "control plane is not reachable as processes" in reason
    assert "the local or kind backend has it" in reason


def test_unmet_kubelets_without_the_flag_name_the_flag() -> None:
    reason = facets.unmet(FakeCluster(frozenset()), {Capability.STOP_KUBELET},  # type: ignore[arg-type]
                          what="t")
    assert reason is not None and "--allow-destructive" in reason and "node agent" in reason


def test_every_capability_has_a_meaning() -> None:
    assert set(facets.MEANING) == set(Capability)


def test_a_permission_is_no_facet() -> None:
    bed = FakeCluster(frozenset(Capability))
    with pytest.raises(ValueError, match="permission"):
        facets.facet(bed, Capability.DESTRUCTIVE)  # type: ignore[arg-type, call-overload]


@pytest.mark.parametrize("name", ["local", "kind", "existing"])
def test_each_cluster_implements_exactly_the_facets_its_backend_declares(name: str) -> None:
    """No stubs: a facet's methods exist only on clusters whose backend can do it."""
    declared = cluster.backend_type(name).traits.capabilities
    for cls in _CLUSTER_CLASSES[name]:
        for capability, facet in facets.FACETS.items():
            if isinstance(getattr(cls, "capabilities", None), frozenset):  # the class says
                assert issubclass(cls, facet) == (capability in cls.capabilities), (cls, capability)
    for capability, facet in facets.FACETS.items():
        assert any(issubclass(c, facet) for c in _CLUSTER_CLASSES[name]) == (
            capability in declared), (name, capability)


def test_cluster_classes_declare_what_their_backend_does() -> None:
    assert ZonedLocalCluster.capabilities == cluster.backend_type("local").traits.capabilities
    local = cluster.backend_type("local").traits
    assert LocalCluster.capabilities == ZonedLocalCluster.capabilities - local.zoned_capabilities
    assert LocalCluster.capabilities == local.plain_capabilities
    assert cluster.backend_type("kind").traits.plain_capabilities == KindCluster.capabilities
    assert KindCluster.capabilities == cluster.backend_type("kind").traits.capabilities
    adopted = ExistingCluster(Path("/k"), allow_destructive=False)
    assert adopted.capabilities == cluster.backend_type("existing").traits.capabilities
    assert ExistingCluster(Path("/k"), allow_destructive=True).capabilities == {
        Capability.DESTRUCTIVE}
    assert not isinstance(adopted, Kubelets)
    assert ControlPlaneProcess.APISERVER.value == "kube-apiserver"
