"""One exit-code table for every command: the documented page is the code's table, every
verdict maps into it, and the commands return its codes (issue 30 item 3)."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from zoneproof import bench
from zoneproof.bench import samples
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


def _commands() -> list[str]:
    sub = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


#: Every command with an argument list it answers at once without starting anything: refused
#: (ERROR) or done (PASS). None: every run of it starts a build (its usage error is checked).
EVERY_COMMAND: dict[str, tuple[list[str], ExitCode] | None] = {
    "build": None,
    "webhook-cert": (["webhook-cert"], ExitCode.PASS),
    "up": (["up", "--backend", "existing", "--kubeconfig", "{tmp}/nope"], ExitCode.ERROR),
    "kind-config": (["kind-config", "--etcd-members", "2"], ExitCode.ERROR),
    "qualify": (["qualify", "--slo-file", "{tmp}/missing.yaml"], ExitCode.ERROR),
    "certify": (["certify", "{tmp}/nope.yaml", "--key", "{tmp}/nope.pem"], ExitCode.ERROR),
    "verify": (["verify", "{tmp}/nope.tar.gz", "--key", "{tmp}/nope.pub"], ExitCode.ERROR),
    "bench": (["bench", "bed", "--runs", "1", "-o", "json"], ExitCode.PASS),
    "mutants": (["mutants", "webhook", "--implementation", "nope"], ExitCode.ERROR),
    "down": (["down", "--kubeconfig", "{tmp}/nope"], ExitCode.ERROR),
    "status": (["status", "--backend", "existing", "--kubeconfig", "{tmp}/nope"],
               ExitCode.ERROR),
    "kubeconfig": (["kubeconfig", "--kubeconfig", "{tmp}/nope"], ExitCode.ERROR),
    "list": (["list", "-o", "json"], ExitCode.PASS),
    "version": (["version"], ExitCode.PASS),
    "results": (["results", "{tmp}/no-such-run"], ExitCode.ERROR),
    "compare": (["compare", "{tmp}/run-a", "{tmp}/run-b"], ExitCode.ERROR),
    "completion": (["completion", "bash"], ExitCode.PASS),
}


def test_the_table_of_commands_is_every_command() -> None:
    assert sorted(EVERY_COMMAND) == sorted(_commands())


@pytest.mark.parametrize("command", sorted(EVERY_COMMAND))
def test_every_command_exits_with_the_tables_codes(command: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(bench.BENCHES, "bed", lambda runs, progress, out: samples.summarize(
        {"up_seconds": [1.0] * runs}, progress, out))
    with pytest.raises(SystemExit) as usage:
        cli.main([command, "--no-such-option"])
    assert usage.value.code == ExitCode.USAGE
    case = EVERY_COMMAND[command]
    if case is not None:
        argv, code = case
        assert cli.main([a.format(tmp=tmp_path) for a in argv]) == code
