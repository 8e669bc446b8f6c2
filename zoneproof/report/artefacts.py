"""The files a chaos run leaves: timeline.json, faults.json, the timeline plot, the journal,
and with register traffic its history (history.json) and porcupine's verdict (porcupine.json,
porcupine/<key>.html for each key it found illegal).

Called by the chaos control and the chaos suite; every artefact of a run is written here
(next to summary.json's ``report.summary``), so their names and formats live in one room.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoneproof.faults.base import FaultRecord
from zoneproof.measure.history import History
from zoneproof.measure.timeline import Timeline
from zoneproof.report import plots
from zoneproof.slo import linearizability
from zoneproof.slo.results import SloResult

__all__ = ["HISTORY", "JOURNAL", "RunArtefacts", "history_files", "load_faults", "save_history",
           "save_journal", "save_run"]

log = logging.getLogger(__name__)
TIMELINE, FAULTS, PLOT_STEM, JOURNAL = "timeline.json", "faults.json", "timeline", "journal.json"
HISTORY = "history.json"


@dataclass(frozen=True, slots=True)
class RunArtefacts:
    """Where one run's artefacts were written (``plots`` empty if drawing failed)."""

    timeline: Path
    faults: Path
    plots: tuple[Path, ...]


def save_run(workdir: Path, timeline: Timeline, faults: Sequence[FaultRecord], *,
             title: str, slos: Sequence[SloResult] = ()) -> RunArtefacts:
    """Write the timeline, the fault records and the timeline plot (PNG, SVG; measured
    events labelled with ``slos``) to ``workdir``. A plot that fails is logged, not raised:
    it is a report, not a verdict."""
    workdir.mkdir(parents=True, exist_ok=True)
    timeline_path, faults_path = workdir / TIMELINE, workdir / FAULTS
    timeline.save(timeline_path)
    faults_path.write_text(json.dumps([r.to_dict() for r in faults], indent=1))
    try:
        drawn = tuple(plots.plot_timeline(timeline.events, faults, workdir / PLOT_STEM,
                                          title=title, slos=slos))
    except Exception as exc:  # a plot is a report, not a verdict: say so and go on
        log.warning("zoneproof: timeline plot failed: %s: %s", type(exc).__name__, exc)
        drawn = ()
    return RunArtefacts(timeline_path, faults_path, drawn)


def load_faults(path: Path) -> list[FaultRecord]:
    """The fault records ``save_run`` wrote."""
    return [FaultRecord.from_dict(r) for r in json.loads(path.read_text())]


def save_journal(workdir: Path, journal: Mapping[str, Any]) -> Path:
    """Write a chaostoolkit journal as ``journal.json`` (values JSON lacks as strings)."""
    path = workdir / JOURNAL
    path.write_text(json.dumps(journal, indent=1, default=str))
    return path


def save_history(workdir: Path, history: History) -> Path:
    """Write the register history of a run's traffic as ``history.json``."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / HISTORY
    history.save(path)
    return path


def history_files(workdir: Path) -> list[Path]:
    """The history artefacts a run left in ``workdir``: history.json, porcupine.json and
    the visualization of each illegal key (those that exist)."""
    found = [workdir / HISTORY, workdir / linearizability.VERDICT]
    found += sorted((workdir / linearizability.VISUALIZATIONS).glob("*.html"))
    return [p for p in found if p.is_file()]
