"""A run's history artefacts: history.json written, then found with porcupine's files."""

from __future__ import annotations

from pathlib import Path

from zoneproof.measure.history import History, ReadMode, TrafficPlan
from zoneproof.report import artefacts


def test_history_files_are_the_history_the_verdict_and_each_visualization(tmp_path: Path) -> None:
    assert artefacts.history_files(tmp_path) == []
    history = History(TrafficPlan("ns", ("r-0",), 1, 150.0, 100.0, ReadMode.INFORMER, 0), "w")
    saved = artefacts.save_history(tmp_path, history)
    assert History.load(saved) == history
    (tmp_path / "porcupine.json").write_text("{}")
    (tmp_path / "porcupine").mkdir()
    (tmp_path / "porcupine" / "r-0.html").write_text("<html/>")
    (tmp_path / "porcupine-input.json").write_text("{}")  # input: not an artefact to show
    assert [p.relative_to(tmp_path).as_posix() for p in artefacts.history_files(tmp_path)] == [
        "history.json", "porcupine.json", "porcupine/r-0.html"]
