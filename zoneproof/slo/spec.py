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
Each name appears once in a file. The file's schema is the pydantic model ``SloFile``; its
JSON Schema ships as ``slo-file.schema.json`` beside this module (``make schemas`` writes it
from the model; a unit test holds the two equal). The file is read by ``_util.userfiles`` (text, no binary,
aliases limited). ``load_slos`` is the one place an SLO file is read and validated: the pytest plugin, the
chaos control and ``zoneproof qualify`` all call it and pass the ``SloSet`` on.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pydantic

from zoneproof import errors
from zoneproof._util import schemas, userfiles

__all__ = ["DEFAULTS", "SCHEMA_VERSION", "Slo", "SloEntry", "SloFile", "SloSet", "known_metrics",
           "load_slos"]

SCHEMA_VERSION = "zoneproof.dev/v1"
DEFAULTS = Path(__file__).with_name("defaults.yaml")
_TOP = ("apiVersion", "kind", "slos")


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


class SloEntry(pydantic.BaseModel):
    """One entry of an SLO file as written: every field but ``name`` may be left to the
    defaults' entry of that name (the JSON Schema of the file: ``SloFile``)."""

    model_config = pydantic.ConfigDict(extra="forbid", strict=True)

    name: str = pydantic.Field(min_length=1, max_length=100)
    metric: str | None = None
    max: float | None = None
    unit: Literal["seconds", "count", "ratio"] | None = None
    description: str | None = None
    allow_no_data: bool | None = None

    @pydantic.field_validator("max", mode="before")
    @classmethod
    def _finite(cls, value: object) -> object:
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)
                                  or not math.isfinite(value) or value < 0):
            raise ValueError(f"max must be a finite number >= 0, got {value!r}")
        return float(value) if isinstance(value, int) else value


class SloFile(pydantic.BaseModel):
    """An SLO file: ``apiVersion: zoneproof.dev/v1``, ``kind: SloSet``, ``slos`` (each name
    once; the entries are ``SloEntry``)."""

    model_config = pydantic.ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    api_version: Literal["zoneproof.dev/v1"] = pydantic.Field(alias="apiVersion")
    kind: Literal["SloSet"]
    slos: list[SloEntry]


#: The JSON Schema of an SLO file, shipped in the package (and in docs/reference/schemas/).
SCHEMA_FILE = Path(__file__).with_name("slo-file.schema.json")


def json_schema() -> str:
    """``SloFile``'s JSON Schema as ``SCHEMA_FILE`` holds it (what ``make schemas`` writes)."""
    return schemas.json_schema(SloFile)


def _problems(error: pydantic.ValidationError, where: str) -> list[str]:
    """One line per problem, its place named as the file writes it."""
    found = []
    for item in error.errors(include_url=False):
        field = ".".join(str(p) for p in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = f"unknown field {field!r}; allowed: {sorted(SloEntry.model_fields)}"
        elif item["type"] == "literal_error":
            message = f"{field} must be one of {message.removeprefix('Input should be ')}, " \
                      f"got {item['input']!r}"
        else:
            message = f"{field}: {message}"
        found.append(f"{where}: {message}")
    return found


def _entries(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries of the SLO file at ``path`` that are well formed, and every problem."""
    try:
        doc = userfiles.load_yaml(path, "SLO file", "give an SLO file (schema: "
                                  "zoneproof/slo/defaults.yaml)")
    except errors.ConfigError as exc:
        return [], [str(exc)]
    if not isinstance(doc, dict):
        return [], [f"{path}: expected a mapping with apiVersion, kind, slos"]
    problems = []
    if doc.get("apiVersion") != SCHEMA_VERSION or doc.get("kind") != "SloSet":
        problems.append(f"{path}: apiVersion must be {SCHEMA_VERSION!r} and kind 'SloSet' "
                        f"(got {doc.get('apiVersion')!r}, {doc.get('kind')!r})")
    problems += [f"{path}: unknown key {k!r}; allowed: {', '.join(_TOP)}" for k in doc
                 if k not in _TOP]
    raw = doc.get("slos")
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        return [], [*problems, f"{path}: slos must be a list of mappings"]
    entries = []
    for index, item in enumerate(raw):
        try:
            entries.append(SloEntry.model_validate(item).model_dump(exclude_none=True))
        except pydantic.ValidationError as exc:
            problems += _problems(exc, f"{path}: slos[{index}]")
    names = [str(e.get("name")) for e in raw]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        problems.append(f"{path}: SLO name(s) {', '.join(map(repr, twice))} given more than "
                        "once: give each SLO once (a later entry would replace an earlier one)")
    return entries, problems


def _build(entry: dict[str, Any], where: str, metrics: Collection[str]
           ) -> tuple[Slo | None, list[str]]:
    problems = [f"{where}: missing {key!r}" for key in ("metric", "max", "unit") if key not in entry]
    if problems:
        return None, problems
    if metrics and entry["metric"] not in metrics:
        return None, [f"{where}: unknown metric {entry['metric']!r}: zoneproof measures "
                      f"{', '.join(sorted(metrics))}"]
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

