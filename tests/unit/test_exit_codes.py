"""One exit-code table for every command: the documented page is the code's table, every
verdict maps into it, and the commands return its codes (issue 30 item 3)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from zoneproof.cli import main as cli
from zoneproof.exit_codes import MEANINGS, ExitCode
from zoneproof.slo.verdict import NotJudged, RunVerdict, exit_code

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "exit-codes.md"
#: The modules whose functions give a command's exit status.
COMMANDS = [ROOT / "zoneproof" / "cli" / "main.py", ROOT / "zoneproof" / "cli" / "readback.py",
            ROOT / "zoneproof" / "suites" / "mutants.py"]


def _documented() -> list[tuple[int, str, str]]:
    rows = [line.strip("|").split("|") for line in PAGE.read_text().splitlines()
            if line.startswith("| ") and line[2:3].isdigit()]
    return [(int(code), name.strip(), meaning.strip()) for code, name, meaning in rows]


def test_the_page_is_the_table() -> None:
    assert _documented() == [(int(c), c.name, MEANINGS[c]) for c in ExitCode]
    assert set(MEANINGS) == set(ExitCode)


@pytest.mark.parametrize("verdict", list(RunVerdict))
def test_every_verdict_exits_with_a_code_of_the_table(verdict: RunVerdict) -> None:
    gap = [NotJudged("t", "left out")]
    codes = {exit_code(verdict, gap), exit_code(verdict, gap, signal_number=15)}
    assert codes <= set(ExitCode)
    assert exit_code(RunVerdict.PARTIAL, gap) == ExitCode.PARTIAL
    assert exit_code(RunVerdict.PARTIAL, [NotJudged("t", "asked", asked=True)]) == ExitCode.PASS


def test_no_command_returns_a_number_outside_the_table() -> None:
    """A bare integer other than 0 in a command's ``return`` bypasses the table."""
    bare = [f"{path.name}:{node.lineno}" for path in COMMANDS
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, int) and node.value.value != 0]
    assert bare == []


def test_a_usage_error_is_2_and_a_refusal_4(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        cli.main(["qualify", "--workers", "0"])
    assert usage.value.code == ExitCode.USAGE
    assert cli.main(["qualify", "--slo-file", str(tmp_path / "missing.yaml")]) == ExitCode.ERROR
    assert cli.main(["results", str(tmp_path / "no-such-run")]) == ExitCode.ERROR
    assert "zoneproof: error:" in capsys.readouterr().err
    assert cli.main(["version", "-o", "json"]) == ExitCode.PASS
