"""Where benches keep their runs' logs: beside the saved figures, or nowhere."""

from pathlib import Path

from zoneproof.bench.samples import artefacts_dir


def test_kept_beside_the_figures_file(tmp_path: Path) -> None:
    out, said = tmp_path / "figures.json", []
    with artefacts_dir(out, "controller", said.append) as kept:
        (kept / "run-1").mkdir()
    assert kept == tmp_path / "figures.json.artefacts" and (kept / "run-1").is_dir()
    assert said == [f"controller: logs kept for analysis in {kept}"]


def test_removed_when_figures_are_not_saved() -> None:
    with artefacts_dir(None, "controller", print) as scratch:
        (scratch / "run-1").mkdir()
    assert not scratch.exists()
