"""The registry of fault kinds: every kind well formed, values built from experiment data
with clear errors, nodes picked without repeats."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from zoneproof import errors
from zoneproof.cluster.interface import Capability, ControlPlaneProcess
from zoneproof.faults import Effect, KillComponent, StopKubelets, registry
from zoneproof.faults.node import pick_nodes

BY_ZONE = {"zone-a": ["a2", "a1"], "zone-b": ["b1", "b2"], "zone-c": ["c1"]}


def test_every_kind_declares_name_requires_effects() -> None:
    kinds = registry.kinds()
    assert {"stop-kubelets", "zone-outage", "kill-etcd-member", "kill-etcd-quorum",
            "kill-control-plane", "kill-controller-leader", "stop-webhook", "cordon-zone",
            "drain-zone"} <= set(kinds)
    for name, kind in kinds.items():
        assert kind.name == name and kind.effects and isinstance(kind.requires, frozenset)
        assert all(v is not dataclasses.MISSING for v in registry.parameters(kind).values()), \
            f"{name}: every parameter has a default (an experiment may omit it)"
        registry.build(name)  # the defaults make a valid value


def test_build_converts_experiment_data() -> None:
    assert registry.build("stop-kubelets", {"zones": ["zone-a"], "count": 2}) == \
        StopKubelets(count=2, zones=("zone-a",))
    assert registry.build("kill-control-plane", {"component": "kube-scheduler"}) == \
        KillComponent(ControlPlaneProcess.SCHEDULER)
    assert registry.build("drain-zone", {"timeout_s": 30}).timeout_s == 30.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "arguments", "text"), [
    ("zone-outage", {"zones": "a"}, r"unknown parameters \['zones'\]; it takes \['freeze', 'zone'\]"),
    ("stop-kubelets", {"count": "2"}, "count must be int, got '2'"),
    ("stop-kubelets", {"count": True}, "count must be int"),
    ("stop-kubelets", {"zones": "zone-a"}, "zones must be tuple"),
    ("kill-control-plane", {"component": "etcd"}, "component must be one of"),
    ("drain-zone", {"timeout_s": 0}, "timeout_s must be > 0"),
    ("pull-the-plug", {}, "unknown fault 'pull-the-plug': choose one of"),
])
def test_build_names_the_fix(name: str, arguments: dict[str, object], text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        registry.build(name, arguments)


def test_a_kind_without_effects_or_with_a_taken_name_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Silent:
        name: ClassVar[str] = "silent"
        requires: ClassVar[frozenset[Capability]] = frozenset()
        effects: ClassVar[frozenset[Effect]] = frozenset()

    with pytest.raises(TypeError, match="declares no effects"):
        registry.kind(Silent)  # type: ignore[type-var]

    @dataclasses.dataclass(frozen=True)
    class Twin:
        name: ClassVar[str] = "zone-outage"
        requires: ClassVar[frozenset[Capability]] = frozenset()
        effects: ClassVar[frozenset[Effect]] = frozenset({Effect.NODES_NOT_READY})

    with pytest.raises(TypeError, match="taken by ZoneOutage"):
        registry.kind(Twin)  # type: ignore[type-var]
    assert "silent" not in registry.kinds()


def test_pick_nodes_takes_zones_in_turn_without_repeats() -> None:
    assert pick_nodes(BY_ZONE, 1, ("zone-b",)) == ["b1"]
    assert pick_nodes(BY_ZONE, 3, ()) == ["a1", "b1", "c1"]
    assert pick_nodes(BY_ZONE, 5, ()) == ["a1", "b1", "c1", "a2", "b2"]
    assert pick_nodes(BY_ZONE, 2, ("zone-a", "zone-c")) == ["a1", "c1"]


@pytest.mark.parametrize("count, zones, text", [
    (0, (), "count must be 1..5"), (6, (), "count must be 1..5"),
    (1, ("zone-x",), "unknown zones"), (2, ("zone-c",), "count must be 1..1"),
])
def test_pick_nodes_rejects(count: int, zones: tuple[str, ...], text: str) -> None:
    with pytest.raises(errors.ConfigError, match=text):
        pick_nodes(BY_ZONE, count, zones)
