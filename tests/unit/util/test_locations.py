"""Where the suites are found: the checkout first, else the installed ``zoneproof_suites``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof._util import locations

ROOT = Path(__file__).resolve().parents[3]


def _suites(directory: Path) -> Path:
    for marker in ("conformance", "chaos"):
        (directory / marker).mkdir(parents=True)
    (directory / "pytest.ini").write_text("[pytest]\n")
    return directory


def test_a_checkout_holds_the_suites() -> None:
    assert locations.suites_root() == ROOT
    assert locations.suite_path("chaos") == ROOT / "chaos"


def test_an_installed_copy_is_found_when_there_is_no_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locations, "_checkout", lambda: tmp_path / "site-packages")
    installed = _suites(tmp_path / "lib" / locations.INSTALLED)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    sys.modules.pop(locations.INSTALLED, None)
    assert locations.suites_root() == installed
    assert locations.suite_path("deploy", "node-agent") == installed / "deploy" / "node-agent"


def test_neither_is_an_error_naming_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locations, "_checkout", lambda: tmp_path)
    monkeypatch.setattr(locations, "INSTALLED", "zoneproof_suites_not_installed")
    with pytest.raises(errors.ConfigError, match="reinstall zoneproof from its wheel"):
        locations.suites_root()
    assert locations.suite_path("chaos") == tmp_path / "chaos"


def test_a_directory_without_pytest_ini_holds_no_suites(tmp_path: Path) -> None:
    (tmp_path / "conformance").mkdir()
    (tmp_path / "chaos").mkdir()
    assert not locations.holds_suites(tmp_path)
    assert locations.holds_suites(_suites(tmp_path / "full"))
