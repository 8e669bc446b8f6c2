"""Backends are found through entry points: installed ones, an unknown name, a new one."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from zoneproof import cluster, errors
from zoneproof.cluster import facets, registry
from zoneproof.cluster.existing import ExistingBackend
from zoneproof.cluster.interface import Capability
from zoneproof.cluster.kind import KindBackend
from zoneproof.cluster.local import LocalBackend, LocalOptions

_FAKE_BACKEND = '''
from zoneproof.cluster.interface import BackendOption, Capability, Traits

class FakeBackend:
    name = "fake"
    traits = Traits(summary="a backend from another distribution", makes_clusters=True,
                    default_etcd_members=5,
                    capabilities=frozenset({Capability.NODE_CONTAINERS}),
                    options=(BackendOption("port-base", "fake ports"),))

    def __init__(self, config):
        self.config = config

    @classmethod
    def from_config(cls, config):
        return cls(config)

class NotABackend:
    name = "broken"
'''


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    """Discovery runs again (it is cached per process), before and after the test."""
    registry._entry_points.cache_clear()
    registry.backend_type.cache_clear()
    yield
    registry._entry_points.cache_clear()
    registry.backend_type.cache_clear()


def _install(directory: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str) -> None:
    """A real (if tiny) installed distribution declaring ``entry_points`` in the group."""
    (directory / "zp_fake_backend.py").write_text(_FAKE_BACKEND)
    info = directory / "zp_fake_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zp-fake-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.GROUP}]\n{textwrap.dedent(entry_points)}")
    monkeypatch.syspath_prepend(str(directory))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "zp_fake_backend", raising=False)


@pytest.fixture
def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      fresh_registry: None) -> None:
    """A distribution adding backend ``fake``."""
    _install(tmp_path, monkeypatch, "fake = zp_fake_backend:FakeBackend\n")


@pytest.fixture
def broken_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        fresh_registry: None) -> None:
    """A distribution whose entry points load no backend."""
    _install(tmp_path, monkeypatch, """\
        broken = zp_fake_backend:NotABackend
        missing = zp_fake_backend_gone:Backend
    """)


def test_the_installed_backends_default_first() -> None:
    assert cluster.backend_names() == ("local", "existing", "kind")
    assert cluster.DEFAULT_BACKEND == "local"
    assert isinstance(cluster.get_backend("local"), LocalBackend)
    assert isinstance(cluster.get_backend("kind"), KindBackend)
    existing = cluster.get_backend("existing", kubeconfig=Path("/k"), allow_destructive=True)
    assert isinstance(existing, ExistingBackend) and existing.allow_destructive


def test_each_backend_is_named_by_its_entry_point() -> None:
    for name in cluster.backend_names():
        assert cluster.backend_type(name).name == name
        assert cluster.get_backend(name).name == name


def test_an_unknown_name_lists_what_is_installed() -> None:
    with pytest.raises(errors.ConfigError,
                       match=r"unknown backend 'nope': choose one of local, existing, kind"):
        cluster.get_backend("nope")


def test_a_backend_added_by_an_entry_point_is_found(fake_distribution: None) -> None:
    assert "fake" in cluster.backend_names()
    backend = cluster.get_backend("fake", options={"port-base": "7"})
    assert type(backend).__module__ == "zp_fake_backend"
    assert backend.config.options == {"port-base": "7"}  # type: ignore[attr-defined]
    assert registry.backends_with(Capability.NODE_CONTAINERS) == ["fake", "kind"]


def test_faults_name_a_new_backend_that_can_take_them(fake_distribution: None) -> None:
    class Adopted:
        name, backend, capabilities = "mine", "existing", frozenset[Capability]()

    with pytest.raises(errors.FaultError, match=r"the fake or kind backend has it"):
        facets.facet(Adopted(), Capability.NODE_CONTAINERS)  # type: ignore[arg-type]


def test_an_entry_point_that_is_no_backend_is_refused(broken_distribution: None) -> None:
    with pytest.raises(errors.ConfigError, match=r"broken = zp_fake_backend:NotABackend .*"
                                                 r"is not a zoneproof backend"):
        cluster.get_backend("broken")
    with pytest.raises(errors.ConfigError, match=r"backend 'missing' .* failed to load"):
        cluster.get_backend("missing")
    assert isinstance(cluster.get_backend("local"), LocalBackend), "the others still load"


def test_an_option_of_another_backend_names_its_owners(fake_distribution: None) -> None:
    with pytest.raises(errors.ConfigError, match=r"--port-base is an option of the local or "
                                                 r"fake backend, not of kind: drop it, or use "
                                                 r"--backend local"):
        cluster.get_backend("kind", options={"port-base": "21000"})


def test_an_option_nobody_declares() -> None:
    with pytest.raises(errors.ConfigError, match=r"--color is no option of any installed"):
        cluster.get_backend("local", options={"color": "red"})


def test_options_reach_the_backend_that_declares_them() -> None:
    backend = cluster.get_backend("local", options={"port-base": "23000", "kwok-per": "zone"})
    assert isinstance(backend, LocalBackend)
    assert backend.options == LocalOptions(port_base=23000, kwok_per="zone")


def test_private_beds_come_from_a_backend_that_makes_clusters() -> None:
    assert cluster.private_bed_backend(cluster.get_backend("kind")) == "kind"
    assert cluster.private_bed_backend(cluster.get_backend("local")) == "local"
    assert cluster.private_bed_backend(cluster.get_backend("existing")) is None, \
        "no other cluster stands in for a user's"


def test_tests_of_the_default_bed_skip_only_on_a_cluster_zoneproof_did_not_make() -> None:
    assert registry.default_bed_premise(cluster.get_backend("local")) is None
    assert registry.default_bed_premise(cluster.get_backend("kind")) is None
    reason = registry.default_bed_premise(cluster.get_backend("existing"))
    assert reason is not None and "existing backend's cluster has the shape its owner" in reason
    assert "--backend local" in reason


def test_each_backend_lists_its_capabilities_one_by_one() -> None:
    """A capability added to ``Capability`` is granted to no backend until it lists it (no
    backend takes "all of them" or "all but some")."""
    listed = {
        "local": {Capability.STOP_KUBELET, Capability.ETCD_MEMBERS, Capability.CONTROL_PLANE,
                  Capability.DESTRUCTIVE, Capability.ZONES, Capability.KUBELET_LINKS},
        "kind": {Capability.STOP_KUBELET, Capability.ETCD_MEMBERS, Capability.CONTROL_PLANE,
                 Capability.NODE_CONTAINERS, Capability.LOAD_IMAGES, Capability.DESTRUCTIVE,
                 Capability.KUBELET_LINKS, Capability.CLUSTER_DNS},
        "existing": set(),  # DESTRUCTIVE when allowed, STOP_KUBELET with the node agent
    }
    for name in ("local", "kind", "existing"):
        assert registry.backend_type(name).traits.capabilities == listed[name], name
