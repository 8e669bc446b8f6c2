"""One name per concept: every command-line option ``--X`` is the pytest plugin's ``--zp-X``
or is listed as command-line-only or pytest-only with why (``cli.spelling``); older spellings
are hidden deprecated aliases that warn; ``-o`` is the output format wherever it is current,
``-n`` nowhere; docs/reference/options.md lists every option."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from _pytest.config.argparsing import Parser
from zoneproof_fixtures import settings

from zoneproof.cli import console, main, spelling
from zoneproof.cluster import registry

DOCS = Path(__file__).resolve().parents[3] / "docs" / "reference" / "options.md"
#: Options every command takes (``-v``, ``-q``) or the root's alone: not a concept of a suite.
_GLOBAL = {"help", "verbose", "quiet", "version"}


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = main._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _current(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if a.option_strings and not isinstance(a, spelling._Deprecated)]


def _long(action: argparse.Action) -> str:
    (name,) = [s for s in action.option_strings if s.startswith("--")]
    return name.removeprefix("--")


def _cli_names() -> set[str]:
    return {_long(a) for p in _commands().values() for a in _current(p)} - _GLOBAL


def _pytest_names() -> set[str]:
    parser = Parser(_ispytest=True)
    settings.add_options(parser)
    return {n.removeprefix("--zp-") for group in parser._groups for option in group.options
            for n in option.names()}


def _backend_options() -> set[str]:
    return {flag for options in registry.options().values() for flag in options}


def test_every_cli_option_is_the_pytest_one_or_says_why_not() -> None:
    cli, plugin = _cli_names(), _pytest_names()
    lonely = cli - plugin - set(spelling.CLI_ONLY) - _backend_options()
    assert not lonely, f"command-line options without --zp- twin or reason: {sorted(lonely)}"
    lonely = plugin - cli - set(spelling.PYTEST_ONLY)
    assert not lonely, f"pytest options without command-line twin or reason: {sorted(lonely)}"


def test_the_lists_of_exceptions_are_not_stale() -> None:
    cli, plugin = _cli_names(), _pytest_names()
    assert set(spelling.CLI_ONLY) <= cli - plugin
    assert set(spelling.PYTEST_ONLY) <= plugin - cli
    assert all(why.strip() for why in [*spelling.CLI_ONLY.values(), *spelling.PYTEST_ONLY.values()])


def test_old_spellings_are_hidden_aliases_of_a_current_option() -> None:
    used = set()
    for name, parser in _commands().items():
        current = {s for a in _current(parser) for s in a.option_strings}
        for action in parser._actions:
            if isinstance(action, spelling._Deprecated):
                assert action.help == argparse.SUPPRESS, (name, action.option_strings)
                assert action.new in current, (name, action.new)
                for old in action.option_strings:
                    assert old in spelling.DEPRECATED, (name, old)
                    assert old not in current, f"zoneproof {name}: {old} is current and deprecated"
                    used.add(old)
    assert used == set(spelling.DEPRECATED)


def test_o_is_the_output_format_and_n_no_option() -> None:
    for name, parser in _commands().items():
        for action in _current(parser):
            assert "-n" not in action.option_strings, f"zoneproof {name}: -n is kubectl's namespace"
            if "-o" in action.option_strings:
                assert tuple(action.choices or ()) == console.FORMATS, f"zoneproof {name}: -o"


@pytest.mark.parametrize(("argv", "attribute", "value", "new"), [
    (["qualify", "--only", "a,b", "c"], "experiments", ["a,b", "c"], "--experiments"),
    (["qualify", "--skip", "a"], "skip_experiments", ["a"], "--skip-experiments"),
    (["qualify", "--slo", "s.yaml"], "slo_file", Path("s.yaml").resolve(), "--slo-file"),
    (["qualify", "-n", "3"], "workers", 3, "--workers"),
    (["down", "--name", "bed"], "name", "bed", "--cluster-name"),
    (["certify", "p.yaml", "--key", "k.pem", "-o", "b.tar.gz"], "bundle",
     Path("b.tar.gz").resolve(), "--bundle"),
    (["certify", "p.yaml", "--key", "k.pem", "--output", "b.tar.gz"], "bundle",
     Path("b.tar.gz").resolve(), "--bundle"),
    (["mutants", "webhook", "--only", "m1"], "variants", ["m1"], "--variants"),
])
def test_an_old_spelling_still_works_and_names_the_new_one(
        argv: list[str], attribute: str, value: object, new: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    args = main._parser().parse_args(argv)
    assert getattr(args, attribute) == value
    (line,) = capsys.readouterr().err.splitlines()
    assert re.fullmatch(rf"zoneproof: warning: \S+ is deprecated and goes in the next release: "
                        rf"use {new}", line), line


def test_the_new_spellings_do_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    args = main._parser().parse_args(["qualify", "--experiments", "a,b", "c", "--workers", "3",
                                      "--cluster-name", "bed", "--slo-file", "s.yaml"])
    assert main._names(args.experiments) == ("a", "b", "c")
    assert args.workers == 3 and args.name == "bed"
    assert capsys.readouterr().err == ""


def test_the_docs_list_every_option_and_old_spelling() -> None:
    text = DOCS.read_text()
    every = [*(f"--{n}" for n in _cli_names() - _backend_options()),
             *(f"--zp-{n}" for n in _pytest_names()), *spelling.DEPRECATED]
    missing = [n for n in every if not re.search(rf"`{re.escape(n)}[` ]", text)]
    assert not missing, f"{DOCS.name} does not list {missing}"
