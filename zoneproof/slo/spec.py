"""The SLO file: ``apiVersion: zoneproof.dev/v1``, ``kind: SloSet``, a list of SLOs.

Each SLO bounds one measured figure from above::

    - name: ha-controller-force-delete        # stable, appears in reports
      metric: force_delete_after_not_ready    # what the experiment measures
      max: 5                                  # the bound, inclusive
      unit: seconds                           # seconds | count
      description: labelled pods force-deleted after their node turns NotReady
      allow_no_data: false                    # no measurement fails unless true

A user file overrides the defaults by name (fields given replace the default's) and may
add SLOs. ``metric`` must be one zoneproof measures: the defaults file bounds each of them
once, so its metrics are the known ones (a misspelled metric would never have data). ``max``
must be a finite number >= 0 (``.nan`` compares false with everything, so it would pass).
``load_slos`` is the one place an SLO file is read and validated: the pytest plugin, the
chaos control and ``zoneproof qualify`` all call it and pass the ``SloSet`` on.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from zoneproof import errors

__all__ = ["DEFAULTS", "SCHEMA_VERSION", "Slo", "SloSet", "known_metrics", "load_slos"]

SCHEMA_VERSION = "zoneproof.dev/v1"
DEFAULTS = Path(__file__).with_name("defaults.yaml")
_UNITS = ("seconds", "count", "ratio")
_FIELDS = {"name", "metric", "max", "unit", "description", "allow_no_data"}


@dataclass(frozen=True, slots=True)
class Slo:
    """An upper bound on one measured figure."""

    name: str
    metric: str
    max: float
    unit: str
    description: str = ""
    allow_no_data: bool = False


@dataclass(frozen=True, slots=True)
class SloSet:
    """The SLOs of a run, by name."""

    slos: tuple[Slo, ...]
    source: Path | None = None
    """The user's file merged over the defaults (None: the defaults alone)."""

    def get(self, name: str) -> Slo:
        """The SLO called ``name``; ConfigError lists the known ones."""
        for slo in self.slos:
            if slo.name == name:
                return slo
        raise errors.ConfigError(f"no SLO named {name!r}; known: {[s.name for s in self.slos]}")


def _entries(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        return [], [f"{path}: cannot read YAML ({exc})"]
    if not isinstance(doc, dict):
        return [], [f"{path}: expected a mapping with apiVersion, kind, slos"]
    problems = []
    if doc.get("apiVersion") != SCHEMA_VERSION or doc.get("kind") != "SloSet":
        problems.append(f"{path}: apiVersion must be {SCHEMA_VERSION!r} and kind 'SloSet' "
                        f"(got {doc.get('apiVersion')!r}, {doc.get('kind')!r})")
    slos = doc.get("slos")
    if not isinstance(slos, list) or not all(isinstance(s, dict) for s in slos):
        return [], [*problems, f"{path}: slos must be a list of mappings"]
    for index, entry in enumerate(slos):
        unknown = set(entry) - _FIELDS
        if unknown:
            problems.append(f"{path}: slos[{index}] has unknown fields {sorted(unknown)}; "
                            f"allowed: {sorted(_FIELDS)}")
        if not isinstance(entry.get("name"), str):
            problems.append(f"{path}: slos[{index}] needs a name")
    return slos, problems


def _build(entry: dict[str, Any], where: str, metrics: Collection[str]
           ) -> tuple[Slo | None, list[str]]:
    problems = []
    for key in ("metric", "max", "unit"):
        if key not in entry:
            problems.append(f"{where}: missing {key!r}")
    if problems:
        return None, problems
    if not isinstance(entry["max"], int | float) or isinstance(entry["max"], bool) \
            or not math.isfinite(entry["max"]) or entry["max"] < 0:
        problems.append(f"{where}: max must be a finite number >= 0, got {entry['max']!r}")
    if metrics and entry["metric"] not in metrics:
        problems.append(f"{where}: unknown metric {entry['metric']!r}: zoneproof measures "
                        f"{', '.join(sorted(metrics))}")
    if entry["unit"] not in _UNITS:
        problems.append(f"{where}: unit must be one of {list(_UNITS)}, got {entry['unit']!r}")
    if problems:
        return None, problems
    return Slo(name=entry["name"], metric=str(entry["metric"]), max=float(entry["max"]),
               unit=entry["unit"], description=str(entry.get("description", "")),
               allow_no_data=bool(entry.get("allow_no_data", False))), []


def known_metrics(defaults: Path = DEFAULTS) -> frozenset[str]:
    """The metrics zoneproof measures: those the defaults file bounds."""
    entries, _ = _entries(defaults)
    return frozenset(str(e["metric"]) for e in entries if "metric" in e)


def load_slos(override: str | Path | None = None, *, defaults: Path = DEFAULTS) -> SloSet:
    """The default SLOs, with ``override``'s entries replacing or adding by name (an empty
    ``override``: the defaults alone).

    Raises ConfigError listing every problem in both files.
    """
    override = Path(override).expanduser().resolve() if override else None
    merged: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for path in (defaults, override) if override is not None else (defaults,):
        entries, found = _entries(path)
        problems += found
        for entry in entries:
            if isinstance(entry.get("name"), str):
                merged[entry["name"]] = {**merged.get(entry["name"], {}), **entry}
    metrics = known_metrics(defaults)
    slos = []
    for name, entry in merged.items():
        slo, found = _build(entry, f"SLO {name!r}", metrics)
        problems += found
        if slo is not None:
            slos.append(slo)
    if problems:
        raise errors.ConfigError("invalid SLO file:\n  - " + "\n  - ".join(problems))
    return SloSet(tuple(slos), override)

