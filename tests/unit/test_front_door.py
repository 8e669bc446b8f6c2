"""The README is the front door: short, its two commands the ones CI and make run, every link
reaching a file of the repository (issue 30 item 6)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _two_commands() -> list[str]:
    block = README.read_text().split("## Fresh machine: the two commands", 1)[1]
    code = block.split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in code.strip().splitlines()]


def test_the_readme_is_a_front_door_of_at_most_200_lines() -> None:
    assert len(README.read_text().splitlines()) <= 200


def test_the_two_commands_are_make_targets_and_ci_runs_the_test_one() -> None:
    qualify, test = _two_commands()
    assert (qualify, test) == ("make qualify", "make test")
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^qualify:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip().startswith("make ")]
    assert ci == [test]


def test_every_link_of_the_readme_reaches_a_file() -> None:
    links = [target for target, _ in _LINK.findall(README.read_text())
             if "://" not in target]
    assert links
    assert [t for t in links if not (ROOT / t).exists()] == []
