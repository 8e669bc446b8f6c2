"""One layer list: the Architecture page's picture (docs/reference/architecture.md) shows
import-linter's layers, in order."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layered,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return [room.strip().removeprefix("zoneproof.") for layer in layered["layers"]
            for room in layer.split("|")]


def _pictured() -> list[str]:
    section = (ROOT / "docs" / "reference" / "architecture.md").read_text()
    picture = section.split("```", 2)[1]
    return re.findall(r"^  ([a-z_]+)/ ", picture, flags=re.MULTILINE)


def test_the_architecture_page_pictures_every_layer_in_import_linters_order() -> None:
    assert _pictured() == _layers()


def test_every_room_of_the_package_is_a_layer() -> None:
    rooms = {p.name for p in (ROOT / "zoneproof").iterdir() if (p / "__init__.py").is_file()}
    assert rooms == set(_layers())
