"""JUnit (pytest ``record_property``) properties: an SLO result, a measured figure.

A chaos test records each ``SloResult`` as ``slo:<name>`` holding ``SloResult.to_dict``
as JSON; summary.json reads them back (also through xdist workers, whose reports carry
the properties). Conformance tests record plain figures (``<name>_seconds``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from zoneproof.slo.results import SloResult

__all__ = ["INTERRUPTED_PROPERTY", "SLO_PROPERTY", "VOID_RUN_PROPERTY", "figure_property",
           "interrupted", "slo_property", "slo_results", "void_run_property", "void_runs"]

SLO_PROPERTY = "slo:"
"""Prefix of the property holding one SLO result of a test."""


def slo_property(result: SloResult) -> tuple[str, str]:
    """The (name, value) a test records for one SLO result."""
    return SLO_PROPERTY + result.name, json.dumps(result.to_dict())


def slo_results(properties: Iterable[tuple[str, object]]) -> list[SloResult]:
    """The SLO results among a test's recorded properties."""
    return [SloResult.from_dict(json.loads(str(value))) for key, value in properties
            if key.startswith(SLO_PROPERTY)]


INTERRUPTED_PROPERTY = "zoneproof:interrupted"
"""Recorded by a test a signal cut short (its value: the signal): its outcome is
``interrupted``, never passed, and the session stops."""


def interrupted(properties: Iterable[tuple[str, object]]) -> str | None:
    """The signal a test recorded as having cut it short, if it did."""
    return next((str(value) for key, value in properties if key == INTERRUPTED_PROPERTY), None)


VOID_RUN_PROPERTY = "zoneproof:void-run"
"""Recorded by a chaos test for each run of its experiment that judged nothing (only VOID
SLOs) before it ran the experiment again; its value: the run's number, verdict and journal."""


def void_run_property(number: int, verdict: str, journal: str) -> tuple[str, str]:
    """The (name, value) a test records for its void run ``number``."""
    return VOID_RUN_PROPERTY, json.dumps({"run": number, "verdict": verdict, "journal": journal})


def void_runs(properties: Iterable[tuple[str, object]]) -> list[dict[str, object]]:
    """The void runs a test recorded, in order."""
    return [json.loads(str(value)) for key, value in properties if key == VOID_RUN_PROPERTY]


def figure_property(name: str, value: float) -> tuple[str, str]:
    """The (name, value) a test records for one measured figure (3 decimals)."""
    return name, f"{value:.3f}"
