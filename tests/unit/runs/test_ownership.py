"""Bed names and paths proven safe before anything is touched; a bed's health from its record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zoneproof import errors, runs
from zoneproof._util import reaping
from zoneproof.cluster import registry
from zoneproof.cluster.local import LocalBackend
from zoneproof.runs import ownership, state

#: The names the issue saw `down --name` abuse, plus their cousins.
ABUSIVE = ["", "..", ".", "../../dir2", "/some/abs/dir", "a/b", "UPPER", "-lead", "trail-",
           "x" * 41, "name with space", "zone_a", "..hidden", "a\x00b"]


@pytest.mark.parametrize("name", ABUSIVE)
def test_abusive_names_are_refused_naming_the_rule(name: str) -> None:
    with pytest.raises(errors.ConfigError, match=r"1-40 lowercase letters, digits or '-'"):
        ownership.check_name(name)


@pytest.mark.parametrize("name", ["zoneproof", "pre", "pre2", "a", "zp-abc123-def456", "9" * 40])
def test_good_names(name: str) -> None:
    assert ownership.check_name(name) == name


def test_bed_dir_stays_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "local"
    root.mkdir()
    assert ownership.bed_dir(root, "bed") == root / "bed"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(errors.ConfigError, match="not a directory of its own"):
        ownership.bed_dir(root, "link")


def test_backend_paths_validate_before_touching(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    victim = tmp_path / "dir2"
    victim.mkdir()
    backend = LocalBackend()
    for name in ("../../dir2", "..", "", str(victim)):
        with pytest.raises(errors.ConfigError):
            backend.delete(name, progress=print)
    assert victim.is_dir()


def test_delete_leaves_a_directory_zoneproof_did_not_make(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    user_dir = tmp_path / "local" / "userdir"
    user_dir.mkdir(parents=True)
    (user_dir / "precious.txt").write_text("mine")
    with pytest.raises(errors.ProvisionError, match="not a bed zoneproof made"):
        LocalBackend().delete("userdir", progress=print)
    assert (user_dir / "precious.txt").read_text() == "mine"
    empty = tmp_path / "local" / "empty"
    empty.mkdir()
    assert LocalBackend().delete("empty", progress=print) and not empty.exists()
    assert LocalBackend().delete("never", progress=print) is False


def _dead_process() -> reaping.ProcessId:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    found = reaping.ProcessId.of(proc.pid)
    proc.kill()
    proc.wait()
    assert found is not None and not found.alive()
    return found


def _made(**changes: object) -> ownership.Ownership:
    base = ownership.Ownership("uid", reaping.ProcessId.me(), "zoneproof up", None, None, True)
    return ownership.Ownership(**{**base.to_dict(), "creator": base.creator, **changes})  # type: ignore[arg-type]


def test_judge_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    H = ownership.Health
    assert ownership.judge(_made(), {"a": True, "b": True})[0] is H.HEALTHY
    assert ownership.judge(_made(), {"a": True, "b": False}) == (H.PARTIAL, "not running: b")
    assert ownership.judge(_made(), {"a": False})[0] is H.LEAKED
    assert ownership.judge(_made(complete=False), {"a": True})[0] is H.STARTING
    dead = _dead_process()
    health, why = ownership.judge(_made(complete=False, creator=dead), {"a": True})
    assert health is H.LEAKED and "interrupted" in why
    health, why = ownership.judge(_made(owner_run="gone"), {"a": True})
    assert health is H.LEAKED and "run gone" in why
    assert ownership.judge(_made(), None)[0] is H.HEALTHY


def test_state_without_a_record_reads_as_kept_and_complete() -> None:
    made = ownership.Ownership.of_state({"spec": {}})
    assert made.complete and made.owner_run is None and made.creator is None
    again = ownership.Ownership.of_state({ownership.STATE_KEY: _made().to_dict()})
    assert again == _made()


def test_claim_holds_the_bed_until_settled_then_keeping_hands_it_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    monkeypatch.setattr(runs, "_current", runs._Current())  # apart from this session's run
    monkeypatch.setenv(reaping.RUN_ENV, "")
    run = runs.open_run("test", keeper=False)
    try:
        made = ownership.claim("local", "bed")
        assert made.owner_run == run.id and not made.complete
        assert [h["kind"] for h in run.holdings()] == ["bed"]
        owned = ownership.settle("local", "bed", made)
        assert owned.complete and owned.owner_run == run.id and run.holdings()
        with ownership.keeping():
            kept = ownership.settle("local", "bed", ownership.claim("local", "bed"))
        assert kept.owner_run is None and run.holdings() == []
    finally:
        runs.close(print)


def test_survey_marks_foreign_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    (tmp_path / "local" / "userdir").mkdir(parents=True)
    (tmp_path / "local" / "Bad Name").mkdir()
    (tmp_path / "local" / "bed").mkdir()
    state.write_json(tmp_path / "local" / "bed" / "state.json", {})
    views = {v.name: v for v in registry.survey()}
    assert views["userdir"].health is ownership.Health.FOREIGN
    assert views["Bad Name"].health is ownership.Health.FOREIGN
    assert views["bed"].health is ownership.Health.HEALTHY  # no processes recorded
