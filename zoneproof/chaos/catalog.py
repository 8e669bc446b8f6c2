"""The chaos experiments of a checkout (``chaos/*.yaml``) and which apply to a run.

Two tags narrow them: an experiment tagged ``in-cluster`` takes down the components' own
pods, so it applies only when every component under test runs in the cluster; one tagged
``zones`` takes a zone down as a whole failure domain (its control plane, its links), so it
applies only where the run's backend makes beds whose zones are such domains
(``Traits.zoned_options``), and runs on one, or where the backend's plain beds take every
fault it injects (``Traits.plain_capabilities``: kind cuts a zone's kubelets off), and runs
on the run's own bed. Any other experiment applies to every run whose beds take its faults
(on a user's cluster that shows only at run time, for zone experiments too); one that
applies and did not run is never a pass. One tagged ``opt-in`` is out of the default set
(it runs only when named: ``--zp-experiments``, ``qualify --experiments``): docs/zones.md
says why.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from zoneproof.chaos import guard
from zoneproof.cluster import facets, registry
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness.component import Components
from zoneproof.components.harness.source import IN_CLUSTER, Where

__all__ = ["IN_CLUSTER_TAG", "OPT_IN_TAG", "ZONES_TAG", "applicable", "fault_needs",
           "in_cluster_only", "names", "not_applicable", "opt_in", "zoned_only"]

IN_CLUSTER_TAG = "in-cluster"
"""An experiment so tagged is about the components' own pods: in-cluster components only."""
ZONES_TAG = "zones"
"""An experiment so tagged needs a bed whose zones are failure domains (Capability.ZONES)."""
OPT_IN_TAG = "opt-in"
"""An experiment so tagged does not yet pass with the reference components for a reason of
the bed (docs/zones.md): out of the default set, run only when named."""


def names(directory: Path) -> list[str]:
    """Every experiment in ``directory`` (its YAML files' stems), sorted."""
    return sorted(p.stem for p in directory.glob("*.yaml"))


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=256)
def _parsed(path: Path, stamp: tuple[int, int]) -> dict[str, Any]:
    """``path``'s experiment, parsed once per (mtime, size) ``stamp``: collection asks of
    every test item, and a pure-Python parse of each file per item took ~0.5 s an item."""
    doc = yaml.load(path.read_text(), Loader=_Loader)  # noqa: S506 (a safe loader)
    return doc if isinstance(doc, dict) else {}


def _stamp(path: Path) -> tuple[int, int]:
    """What tells an edited file apart: (mtime, size)."""
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def _load(path: Path) -> dict[str, Any]:
    return _parsed(path, _stamp(path))


def _tagged(directory: Path, tag: str) -> set[str]:
    return {p.stem for p in directory.glob("*.yaml") if tag in (_load(p).get("tags") or [])}


def in_cluster_only(directory: Path) -> set[str]:
    """The experiments tagged ``in-cluster``."""
    return _tagged(directory, IN_CLUSTER_TAG)


def zoned_only(directory: Path) -> set[str]:
    """The experiments tagged ``zones``."""
    return _tagged(directory, ZONES_TAG)


def fault_needs(directory: Path, name: str) -> frozenset[Capability]:
    """What the faults experiment ``name`` injects need of a cluster (DESTRUCTIVE among it)."""
    path = directory / f"{name}.yaml"
    return _needs(path, _stamp(path))


@lru_cache(maxsize=256)
def _needs(path: Path, stamp: tuple[int, int]) -> frozenset[Capability]:
    plan = guard.FaultPlan.of(_parsed(path, stamp))
    return frozenset().union(*guard.needs(plan).values())


def opt_in(directory: Path) -> set[str]:
    """The experiments tagged ``opt-in``: run only when named."""
    return _tagged(directory, OPT_IN_TAG)


def not_applicable(directory: Path, components: Components, *, zones: bool = True,
                   capabilities: frozenset[Capability] = frozenset(),
                   beds_known: bool = False) -> dict[str, str]:
    """Experiment → why it does not apply to ``components`` (none when all run in-cluster)
    on a run whose backend makes beds with failure-domain zones (``zones``) or not, and
    whose plain beds have ``capabilities``; where the backend makes its beds
    (``beds_known``), an untagged one whose faults need what its beds lack does not apply
    either. On a user's cluster, whose capabilities show at run time, what its faults need
    is judged there (a zone experiment whose faults the cluster takes runs on it)."""
    zoned = zoned_only(directory)
    excluded = {} if zones or not beds_known else {
        name: "takes a zone down as a whole failure domain (its etcd member and control-plane "
              "replicas, its links): only on a backend that makes beds whose zones are such "
              "domains (the local backend's zoned layout, as root)"
        for name in sorted(zoned)
        if not fault_needs(directory, name) <= capabilities}
    if beds_known:
        excluded |= {name: _lacking(missing) for name in names(directory) if name not in zoned
                     and (missing := fault_needs(directory, name) - capabilities)}
    if all(c.where is Where.IN_CLUSTER for c in components):
        return excluded
    ran = ", ".join(f"the {c.kind} {c.where}" for c in components)
    return {**excluded, **{
        name: f"takes down the components' own pods: only for components that all run "
              f"{IN_CLUSTER} (these run: {ran})"
        for name in sorted(in_cluster_only(directory))}}


def _lacking(missing: frozenset[Capability]) -> str:
    """Why an experiment needing ``missing`` does not apply, and which backends have it."""
    def one(c: Capability) -> str:
        owners = " or ".join(registry.backends_with(c)) or "no installed"
        return f"{c.value}, which this backend's beds lack ({facets.MEANING[c]}; the {owners} " \
               "backend has it)"

    return "needs " + "; and ".join(one(c) for c in sorted(missing, key=lambda c: c.value))


def applicable(directory: Path, components: Components, *, zones: bool = True,
               capabilities: frozenset[Capability] = frozenset(),
               beds_known: bool = False) -> list[str]:
    """The experiments of the default set that apply to ``components`` (on a run with zoned
    beds or not, plain beds with ``capabilities``, known before the run or not)."""
    excluded = {*not_applicable(directory, components, zones=zones, capabilities=capabilities,
                                beds_known=beds_known),
                *opt_in(directory)}
    return [name for name in names(directory) if name not in excluded]
