"""Backends by name, found through the entry-point group ``zoneproof.backends``.

The one place that knows which backends exist. A backend is a class satisfying
``interface.BackendType`` in a module of any installed distribution that declares it::

    [project.entry-points."zoneproof.backends"]
    mine = "my_package.my_backend:MyBackend"

Discovery reads installed metadata once per process (cached); a backend's module is
imported only when it is asked for (or when every backend's traits are asked for). Beds by
backend too: every bed there is (``survey``), and how a run's beds are undone
(``delete_bed``, ``repair_bed``: reapers in entry-point group ``zoneproof.reapers``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, cast

from zoneproof import errors
from zoneproof.cluster.interface import (
    Backend,
    BackendConfig,
    BackendOption,
    BackendType,
    Capability,
    Progress,
    Repairable,
    Traits,
)
from zoneproof.runs import ownership, state

__all__ = [
    "DEFAULT",
    "GROUP",
    "NOT_THE_DEFAULT_BED",
    "NO_PRIVATE_BEDS",
    "backend_type",
    "backends_with",
    "default_bed_premise",
    "delete_bed",
    "get_backend",
    "names",
    "options",
    "private_bed_backend",
    "repair_bed",
    "survey",
]

GROUP = "zoneproof.backends"
#: The backend of a run that names none.
DEFAULT = "local"
#: Why a run of a backend that makes no clusters (a user's cluster) has no private beds.
NO_PRIVATE_BEDS = ("needs a private bed, and the {backend} backend makes none: zoneproof never "
                   "substitutes another cluster for the one under test; run it with a backend "
                   "that makes clusters (--backend local or kind; pytest: --zp-backend), or on "
                   "this cluster itself with --allow-destructive (pytest: "
                   "--zp-allow-destructive)")
#: Why a test of beds zoneproof makes skips on a run of a cluster it did not make.
NOT_THE_DEFAULT_BED = ("checks beds zoneproof makes (the default shape, kwok's fake images, its "
                       "etcd members, beds of its own): the {backend} backend's cluster has the "
                       "shape its owner gave it, and a run of it makes no beds; run it with a "
                       "backend that makes clusters (--backend local; pytest: --zp-backend)")


def default_bed_premise(backend: Backend) -> str | None:
    """None if the run's cluster is a default bed ``backend`` made; else why a test of that
    bed (marked ``default_bed``) skips."""
    return None if backend.traits.makes_clusters else NOT_THE_DEFAULT_BED.format(
        backend=backend.name)


@functools.cache
def _entry_points() -> dict[str, metadata.EntryPoint]:
    found: dict[str, metadata.EntryPoint] = {}
    for entry in metadata.entry_points(group=GROUP):
        other = found.get(entry.name)
        if other is not None and other.value != entry.value:
            raise errors.ConfigError(
                f"backend {entry.name!r} is declared twice in entry-point group {GROUP}: "
                f"{other.value} and {entry.value}; uninstall one of the distributions")
        found[entry.name] = entry
    return found


def names() -> tuple[str, ...]:
    """Names of the installed backends: the default first, then alphabetically."""
    return tuple(sorted(_entry_points(), key=lambda name: (name != DEFAULT, name)))


@functools.cache
def backend_type(name: str) -> BackendType:
    """The backend class called ``name``; ConfigError lists the installed ones."""
    entry = _entry_points().get(name)
    if entry is None:
        raise errors.ConfigError(
            f"unknown backend {name!r}: choose one of {', '.join(names())} (a backend is "
            f"installed by a distribution declaring it in entry-point group {GROUP})")
    try:
        loaded = entry.load()
    except (ImportError, AttributeError) as exc:
        raise errors.ConfigError(f"backend {name!r} ({entry.value}) failed to load: {exc}; "
                                 "reinstall the distribution that declares it") from exc
    if getattr(loaded, "name", None) != name or not isinstance(
            getattr(loaded, "traits", None), Traits) or not callable(
            getattr(loaded, "from_config", None)):
        raise errors.ConfigError(
            f"entry point {name} = {entry.value} (group {GROUP}) is not a zoneproof backend: "
            f"it needs name = {name!r}, traits (a Traits) and from_config(BackendConfig)")
    return cast(BackendType, loaded)


def get_backend(name: str, *, kubeconfig: Path | None = None, allow_destructive: bool = False,
                options: Mapping[str, str] | None = None) -> Backend:
    """The backend called ``name``, configured; ConfigError names what is wrong and the fix."""
    kind = backend_type(name)
    given = dict(options or {})
    declared = {option.flag for option in kind.traits.options}
    if unknown := sorted(set(given) - declared):
        raise errors.ConfigError("; ".join(_not_an_option(name, flag) for flag in unknown))
    return kind.from_config(BackendConfig(kubeconfig=kubeconfig,
                                          allow_destructive=allow_destructive, options=given))


def _not_an_option(name: str, flag: str) -> str:
    owners = [other for other in names() if flag in options().get(other, {})]
    if not owners:
        return f"--{flag} is no option of any installed backend"
    return (f"--{flag} is an option of the {' or '.join(owners)} backend, not of {name}: drop "
            f"it, or use --backend {owners[0]}")


def options() -> dict[str, dict[str, BackendOption]]:
    """Backend name → its options by flag (loads every backend)."""
    return {name: {o.flag: o for o in backend_type(name).traits.options} for name in names()}


def backends_with(capability: Capability) -> list[str]:
    """Names of the backends whose clusters can have ``capability`` (loads every backend)."""
    return [name for name in names() if capability in backend_type(name).traits.capabilities]


def private_bed_backend(backend: Backend) -> str | None:
    """The backend of private beds (destructive tests) on a run of ``backend``: itself if it
    makes clusters, else None — a user's cluster is never a private bed, and no other
    cluster stands in for it (``NO_PRIVATE_BEDS`` says why)."""
    return backend.name if backend.traits.makes_clusters else None


def survey() -> list[ownership.BedView]:
    """Every directory in the root of every installed backend that keeps state."""
    found = []
    for name in names():
        root = state.state_root() / name
        if root.is_dir():
            found += [ownership.view(name, path) for path in sorted(root.iterdir())
                      if not path.name.endswith(".lock")]
    return found


# -- how a run's beds are undone (reapers of holding kinds ``bed`` and ``repair``) ----------

def delete_bed(holding: dict[str, Any], progress: Progress) -> None:
    """Delete the bed a run made (``ownership.claim``)."""
    get_backend(holding["backend"]).delete(holding["name"], progress=progress)


def repair_bed(holding: dict[str, Any], progress: Progress) -> None:
    """Restart what a run's faults stopped in a kept bed (``ownership.disturbed``)."""
    found = get_backend(holding["backend"]).get(holding["name"])
    if isinstance(found, Repairable):
        found.repair(progress)
