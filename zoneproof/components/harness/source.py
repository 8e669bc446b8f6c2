"""Where a component under test comes from: the ``Source`` contract and its registry.

A source is a value (a frozen dataclass of its keys) of one registered class: a
registered implementation and its variant, a vendor's command, a webhook at a URL,
workloads deployed from manifests + an image archive. Each class says its ``name``, its
``options`` (its keys, and the flags that choose it), ``where`` its components run (host
or in-cluster) and what that ``requires`` of a backend; each value reads and writes its
dict form, names its ``problems`` with their fix, describes itself (``label``) and
``start``s a component through the kind's ``Launcher`` in the one way it delivers it:
host processes from a command, an endpoint already running, or workloads in the
cluster. Whatever was started stops with what the launcher returned.

The classes are entry points of group ``zoneproof.sources`` (``pyproject.toml``); a new
delivery is one module and one line there::

    [project.entry-points."zoneproof.sources"]
    helm = "acme_zoneproof.helm:Helm"
"""

from __future__ import annotations

import enum
import functools
import importlib.metadata
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from zoneproof import errors
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import registry
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.option import Option

if TYPE_CHECKING:
    from zoneproof.components import manifests

__all__ = ["GROUP", "HOST", "IN_CLUSTER", "Launcher", "Named", "Source", "Where", "Workloads",
           "default", "get", "names", "registered"]

GROUP = "zoneproof.sources"
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)
Named = Callable[[str], str]
"""An option's name as the user wrote it, by key (``ca_bundle`` → ``--webhook-ca-bundle``)."""


class Where(enum.StrEnum):
    """Where components of a source run."""

    HOST = "host"
    """Host processes the suite starts, or an endpoint it is given."""
    IN_CLUSTER = "in-cluster"
    """Workloads the suite deploys in the cluster."""


#: Where components under test run, by name: host processes (or a URL), in-cluster workloads.
HOST, IN_CLUSTER = Where.HOST, Where.IN_CLUSTER


class Workloads(Protocol):
    """A source deployed as workloads: what to load and apply (``in_cluster.install``)."""

    def render(self, kind: Kind) -> tuple[Path, manifests.Rendered]:
        """The image archive to load into the nodes and the objects to apply."""

    def describe(self) -> dict[str, str]:
        """What a report says of it (its manifests)."""


class Launcher(Protocol[C_contra, T_co]):
    """A kind's runner: the ways it starts a component (``component.Component``; a source
    only hands it on), each returning what stops it."""

    def process(self, component: C_contra) -> T_co:
        """Start the component's command (``Component.argv``) as host processes."""

    def endpoint(self, component: C_contra, url: str, ca_bundle: bytes) -> T_co:
        """Use the component already running at ``url`` (its CA: ``ca_bundle``)."""

    def workloads(self, component: C_contra, workloads: Workloads) -> T_co:
        """Deploy the component as workloads in the cluster."""


class Source:
    """The contract of a component source (subclasses are frozen dataclasses of their keys)."""

    __slots__ = ()
    name: ClassVar[str]
    options: ClassVar[tuple[Option, ...]]
    where: ClassVar[Where] = Where.HOST
    requires: ClassVar[frozenset[Capability]] = frozenset()
    """What a backend must offer for components of this source to run on it."""
    default: ClassVar[bool] = False
    """The source of its ``where`` when the options choose none."""
    external: ClassVar[bool] = False
    """It runs elsewhere: the suite cannot start, stop or restart it."""
    registers_itself: ClassVar[bool] = False
    """A webhook of it is registered by its own manifests (no registration file)."""

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """Its keys in a component's dict form."""
        return tuple(o.key for o in cls.options)

    @classmethod
    def delivers(cls, kind: Kind) -> bool:
        """True if components of ``kind`` can come from this source."""
        return True

    # -- the one serialization form -------------------------------------------------------
    def to_dict(self) -> dict[str, str]:
        """Its keys (those that differ from their defaults), JSON-ready."""
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Mapping[str, str], kind: Kind) -> Source:
        """The value of ``to_dict``'s keys (checked against ``keys`` by the caller)."""
        raise NotImplementedError

    @classmethod
    def from_options(cls, kind: Kind, given: Mapping[str, str], named: Named) -> Source:
        """The value the options ``given`` (by key, paths resolved) choose; ConfigError
        names a missing one."""
        return cls.from_dict(given, kind)

    # -- what it is -------------------------------------------------------------------------
    def problems(self, kind: Kind) -> list[str]:
        """What is wrong with it, each with the fix (empty when it can run)."""
        raise NotImplementedError

    def label(self, kind: Kind) -> str:
        """A short human description for messages."""
        raise NotImplementedError

    def start(self, component: C, launcher: Launcher[C, T]) -> T:
        """Start ``component`` (of this source) through its kind's ``launcher``."""
        raise NotImplementedError

    def fixed(self, kind: Kind) -> Mapping[str, str]:
        """Settings components of it fix themselves (not the suite's to choose)."""
        return {}

    # -- commands and variants (registered implementations) -------------------------------
    def command(self, kind: Kind) -> str:
        """The command template the suite starts; ConfigError why there is none."""
        raise errors.ConfigError(f"the {self.label(kind)} is not started from a command by the "
                                 "suite")

    @property
    def variant(self) -> str | None:
        """The registered variant it runs (None: it has none)."""
        return None

    def implementation(self, kind: Kind) -> registry.Implementation | None:
        """The registered implementation whose variants it runs (None: none)."""
        return None

    def cannot_be(self, kind: Kind, variant: str) -> str | None:
        """Why it cannot run ``variant`` (None: it can)."""
        implementation = self.implementation(kind)
        if implementation is None:
            return (f"the {self.label(kind)} has no variants: register it in the entry-point "
                    f"group {registry.GROUP!r} with its variants to run checks against "
                    f"{variant!r}")
        if variant not in implementation.variants:
            return (f"the {kind} implementation {implementation.name!r} has no variant "
                    f"{variant!r} (it has {', '.join(implementation.variants)})")
        return None

    def with_variant(self, kind: Kind, variant: str) -> Source:
        """The same source running ``variant``; ConfigError when it cannot."""
        raise errors.ConfigError(self.cannot_be(kind, variant) or f"the {self.label(kind)} "
                                 "runs no variants")


def _rank(source: type[Source]) -> tuple[int, bool, str]:
    return list(Where).index(source.where), not source.default, source.name


@functools.cache
def registered() -> tuple[type[Source], ...]:
    """Every registered source: by where, its default first, then by name."""
    found: dict[str, type[Source]] = {}
    for entry in importlib.metadata.entry_points(group=GROUP):
        loaded: Any = entry.load()
        if not (isinstance(loaded, type) and issubclass(loaded, Source)) or loaded.name != entry.name:
            raise errors.ConfigError(f"entry point {entry.name} = {entry.value} (group {GROUP!r}) "
                                     f"must be a Source class named {entry.name!r}, got {loaded!r}")
        found[entry.name] = loaded
    if not found:
        raise errors.ConfigError(f"no component source is registered (entry-point group "
                                 f"{GROUP!r}): reinstall zoneproof (`pip install -e .`)")
    return tuple(sorted(found.values(), key=_rank))


def names() -> tuple[str, ...]:
    """The registered sources' names, in ``registered`` order."""
    return tuple(s.name for s in registered())


def get(name: str) -> type[Source]:
    """The source called ``name``; ConfigError lists the registered ones."""
    for source in registered():
        if source.name == name:
            return source
    raise errors.ConfigError(f"component source {name!r} is unknown: choose one of "
                             f"{', '.join(names())}")


def default(where: Where) -> type[Source]:
    """The source of components that run ``where`` when nothing names one."""
    for source in registered():
        if source.where is where and source.default:
            return source
    raise errors.ConfigError(f"no registered source is the default for {where} components")
