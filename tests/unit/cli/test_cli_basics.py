"""Command-line conventions (issue 30 item 3): versions, -v/-q anywhere, durations, help without
markup and for every option, shell completion, kubeconfig precedence, -o text|json|yaml."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from zoneproof import bench
from zoneproof.bench import samples
from zoneproof.binaries import BINARIES, PINS
from zoneproof.cli import main
from zoneproof.cluster.interface import ClusterStatus

CLI = [sys.executable, "-m", "zoneproof.cli.main"]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, **(env or {})})


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parser = main._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"zoneproof": parser, **{f"zoneproof {n}": p for n, p in sub.choices.items()}}


def test_version_names_zoneproof_kubernetes_and_every_pinned_binary() -> None:
    for args in (("--version",), ("version",)):
        done = _run(*args)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("zoneproof ")
        assert f"kubernetes {PINS.kubernetes}" in lines
        for name, project in BINARIES.items():
            assert any(line.split()[:2] == [name, PINS.version_of(project)] for line in lines), name


def test_version_as_json() -> None:
    done = _run("version", "-o", "json")
    data = json.loads(done.stdout)
    assert data["kubernetes"] == PINS.kubernetes
    assert set(data["binaries"]) == set(BINARIES)


@pytest.mark.parametrize("argv", [["-v", "-q", "list"], ["list", "-v", "-q"], ["-v", "list", "-q"]])
def test_verbose_and_quiet_are_taken_anywhere(argv: list[str]) -> None:
    args = main._parser().parse_args(argv)
    assert (args.verbose, args.quiet) == (True, True)


def test_without_them_both_are_off() -> None:
    args = main._parser().parse_args(["list"])
    assert (args.verbose, args.quiet) == (False, False)


@pytest.mark.parametrize(("given", "seconds"), [("30s", 30.0), ("1m", 60.0), ("45", 45.0)])
def test_durations_take_units(given: str, seconds: float) -> None:
    args = main._parser().parse_args(["up", "--toleration-seconds", given,
                                      "--node-monitor-grace-period", given])
    assert args.toleration_seconds == seconds
    assert args.node_monitor_grace_period == seconds


def test_a_bad_duration_is_a_usage_error_naming_the_forms() -> None:
    done = _run("up", "--toleration-seconds", "5 minutes")
    assert done.returncode == 2
    assert "30s, 5m, 1m30s" in done.stderr


def test_help_has_no_markup_and_every_option_says_what_it_does() -> None:
    for name, parser in _parsers().items():
        text = parser.format_help()
        assert "``" not in text and ":class:" not in text, name
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert action.help, f"{name} {action.option_strings or action.dest}: no help"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_shell_code(shell: str) -> None:
    done = _run("completion", shell)
    assert done.returncode == 0, done.stderr
    assert "zoneproof" in done.stdout and len(done.stdout) > 200


def test_completion_completes_commands_and_options() -> None:
    env = {"_ARGCOMPLETE": "1", "COMP_LINE": "zoneproof qua", "COMP_POINT": "13",
           "_ARGCOMPLETE_IFS": "\n", "_ARGCOMPLETE_STDOUT_FILENAME": "/dev/stdout"}
    done = _run(env=env)
    assert "qualify" in done.stdout.split()


def test_kubeconfig_flag_wins_then_env_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text("{}")
    monkeypatch.setattr(Path, "home", lambda: tmp_path)
    parse = main._parser().parse_args
    monkeypatch.setenv("KUBECONFIG", "/from/env")
    given = parse(["status", "--backend", "existing", "--kubeconfig", "/from/flag"])
    assert main._kubeconfig(given) == Path("/from/flag")
    assert main._kubeconfig(parse(["status", "--backend", "existing"])) == Path("/from/env")
    monkeypatch.delenv("KUBECONFIG")
    assert main._kubeconfig(parse(["status", "--backend", "existing"])) == \
        tmp_path / ".kube" / "config"
    assert main._kubeconfig(parse(["status"])) is None  # the local backend makes its own


def test_list_prints_json_and_yaml_of_the_same_beds_and_runs(tmp_path: Path) -> None:
    env = {"ZONEPROOF_STATE": str(tmp_path / "state")}
    as_json = _run("list", "-o", "json", env=env)
    as_yaml = _run("list", "-o", "yaml", env=env)
    as_text = _run("list", env=env)
    assert as_json.returncode == as_yaml.returncode == as_text.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == {"beds": [], "runs": [], "killed": []}
    assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)
    assert as_text.stdout.startswith("BACKEND")


def test_status_text_and_data_say_the_same() -> None:
    status = ClusterStatus(name="bed", backend="local", kubeconfig=Path("/k"),
                           processes={"etcd-0": True, "kube-scheduler": False},
                           nodes_ready={"n1": True, "n2": False})
    lines = main._status_text(status, {"zone-a": ["n1"], "zone-b": ["n2"]})
    assert lines[0].startswith("cluster bed (local): NOT HEALTHY")
    assert "  process kube-scheduler: STOPPED" in lines
    assert lines[-2:] == ["  zone-a: n1 Ready", "  zone-b: n2 NotReady"]


@pytest.mark.parametrize("command", ["results", "compare", "version", "list", "status", "verify",
                                     "bench"])
def test_every_printing_command_takes_o_text_json_yaml(command: str) -> None:
    parser = _parsers()[f"zoneproof {command}"]
    (output,) = [a for a in parser._actions if "--output" in a.option_strings]
    assert output.option_strings == ["-o", "--output"]
    assert tuple(output.choices or ()) == ("text", "json", "yaml")


def _fake_bench(runs: int, progress: Callable[[str], None], out: Path | None
                ) -> dict[str, dict[str, float]]:
    return samples.summarize({"up_seconds": [3.0, 1.0, 2.0][:runs]}, progress, out)


@pytest.mark.parametrize("output", ["text", "json", "yaml"])
def test_bench_prints_its_figures_as_asked(output: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path / "state"))
    monkeypatch.setitem(bench.BENCHES, "bed", _fake_bench)
    saved = tmp_path / "figures.json"
    assert main.main(["bench", "bed", "--runs", "3", "--json", str(saved), "-o", output]) == 0
    printed = capsys.readouterr().out
    figures = {"up_seconds": {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}}
    if output == "text":
        assert printed.splitlines() == [f"{'up_seconds':36} median     2.000  (min 1.000, "
                                        "max 3.000, n=3)"]
    else:
        assert (json.loads(printed) if output == "json" else yaml.safe_load(printed)) == figures
    assert json.loads(saved.read_text())["figures"] == figures
