"""Which chaos experiments apply to a run: the in-cluster ones only to in-cluster components."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.chaos import catalog
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.in_cluster import InCluster


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    (tmp_path / "zone-outage.yaml").write_text("title: t\ntags: [zoneproof, zone-outage]\n")
    (tmp_path / "pods-down.yaml").write_text("title: t\ntags: [zoneproof, in-cluster]\n")
    (tmp_path / "untagged.yaml").write_text("title: t\n")
    return tmp_path


def _in_cluster(kind: Kind) -> Component:
    return Component(kind, source=InCluster(Path("deploy") / str(kind)))


@pytest.mark.parametrize(("components", "excluded"), [
    (Components(), {"pods-down"}),
    (Components(webhook=_in_cluster(Kind.WEBHOOK)), {"pods-down"}),  # one of two is not enough
    (Components(_in_cluster(Kind.WEBHOOK), _in_cluster(Kind.CONTROLLER)), set()),
])
def test_in_cluster_experiments_apply_only_when_both_components_run_in_the_cluster(
        directory: Path, components: Components, excluded: set[str]) -> None:
    assert catalog.names(directory) == ["pods-down", "untagged", "zone-outage"]
    assert set(catalog.not_applicable(directory, components)) == excluded
    assert catalog.applicable(directory, components) == sorted(
        {"pods-down", "untagged", "zone-outage"} - excluded)


def test_the_reason_names_what_the_components_run_as(directory: Path) -> None:
    why = catalog.not_applicable(directory, Components())["pods-down"]
    assert "in-cluster" in why and "host" in why


def test_zone_experiments_apply_only_where_the_backend_makes_zoned_beds() -> None:
    directory = Path(__file__).parents[3] / "chaos"
    zoned = catalog.zoned_only(directory)
    assert {"zone-outage-full", "zone-partition", "kubelet-apiserver-cut", "zone-latency",
            "two-zones-down"} <= zoned
    assert zoned - catalog.opt_in(directory) <= set(
        catalog.applicable(directory, Components(), zones=True))
    excluded = catalog.not_applicable(directory, Components(), zones=False, beds_known=True)
    assert zoned <= set(excluded)
    assert all("failure domain" in excluded[name] for name in zoned)
    users = catalog.not_applicable(directory, Components(), zones=False)
    assert not zoned & set(users), "a user's cluster shows at run time what it takes"


def test_an_opt_in_experiment_is_out_of_the_default_set(directory: Path) -> None:
    (directory / "split.yaml").write_text("title: t\ntags: [zoneproof, zones, opt-in]\n")
    assert catalog.opt_in(directory) == {"split"}
    assert "split" in catalog.names(directory)
    assert "split" not in catalog.applicable(directory, Components(), zones=True)
    assert "split" not in catalog.not_applicable(directory, Components(), zones=True)


def test_a_zoned_experiment_applies_where_plain_beds_take_its_faults(tmp_path: Path) -> None:
    """A ``zones`` experiment whose faults need only what a backend's plain beds have (kind:
    kubelet-links) applies there without zoned beds; one needing zones as failure domains
    does not."""
    fault = ("method:\n  - type: action\n    name: f\n    provider: {type: python, module: "
             "zoneproof.chaos.actions, func: inject_fault, arguments: {fault: %s}}\n")
    (tmp_path / "cut.yaml").write_text("tags: [zones]\n" + fault % "kubelet-apiserver-cut")
    (tmp_path / "partition.yaml").write_text("tags: [zones]\n" + fault % "zone-partition")
    assert catalog.fault_needs(tmp_path, "cut") == {Capability.KUBELET_LINKS,
                                                    Capability.DESTRUCTIVE}
    kind = frozenset({Capability.KUBELET_LINKS, Capability.DESTRUCTIVE})
    assert set(catalog.not_applicable(tmp_path, Components(), zones=False,
                                      beds_known=True)) == {"cut", "partition"}
    assert set(catalog.not_applicable(tmp_path, Components(), zones=False, capabilities=kind,
                                      beds_known=True)) == {"partition"}
    assert catalog.applicable(tmp_path, Components(), zones=False, capabilities=kind,
                              beds_known=True) == ["cut"]
    assert catalog.applicable(tmp_path, Components(), zones=True) == ["cut", "partition"]


def test_an_edited_experiment_is_read_again(directory: Path) -> None:
    """Parses are kept per file stamp (collection asks once per test item), yet an edit counts."""
    assert catalog.opt_in(directory) == set()
    (directory / "untagged.yaml").write_text("title: t\ntags: [opt-in, and-a-longer-list]\n")
    assert catalog.opt_in(directory) == {"untagged"}


def test_the_shipped_experiments_are_parsed_once_per_file() -> None:
    """2,700 collected items asked each of ~20 files: a parse per ask was ~0.5 s an item."""
    chaos = Path(__file__).parents[3] / "chaos"
    catalog.zoned_only(chaos)
    before = catalog._parsed.cache_info().misses
    for _ in range(50):
        catalog.zoned_only(chaos)
        catalog.opt_in(chaos)
    assert catalog._parsed.cache_info().misses == before


def test_an_experiment_whose_faults_a_backends_beds_lack_does_not_apply(tmp_path: Path) -> None:
    """Where the backend makes its beds, an untagged experiment needing what they lack (the
    cluster DNS on the local bed) does not apply, saying who has it; on a user's cluster
    (beds not known before the run) it stays."""
    (tmp_path / "dns.yaml").write_text(
        "method:\n  - type: action\n    name: f\n    provider: {type: python, module: "
        "zoneproof.chaos.actions, func: inject_fault, arguments: {fault: dns-outage}}\n")
    local = frozenset({Capability.STOP_KUBELET, Capability.DESTRUCTIVE})
    why = catalog.not_applicable(tmp_path, Components(), capabilities=local, beds_known=True)
    assert set(why) == {"dns"} and "cluster-dns" in why["dns"] and "kind backend" in why["dns"]
    assert catalog.applicable(tmp_path, Components(), capabilities=local, beds_known=True) == []
    assert catalog.applicable(tmp_path, Components(), capabilities=local | {
        Capability.CLUSTER_DNS}, beds_known=True) == ["dns"]
    assert catalog.applicable(tmp_path, Components()) == ["dns"]
