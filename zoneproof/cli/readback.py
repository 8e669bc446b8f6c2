"""``zoneproof version``, ``results``, ``compare`` and ``completion``: commands that only read
and print (``-o text|json|yaml``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from argcomplete.shell_integration import shellcode

from zoneproof.cli import console
from zoneproof.report import compare, results, versions

__all__ = ["SHELLS", "add_commands", "version_text"]

SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")
_REPORTS = Path("reports")


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=console.FORMATS, default="text",
                        help="output format (default: text)")


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The read-only commands, each with its handler."""
    ver = sub.add_parser("version", help="versions of zoneproof, Python, Kubernetes and every "
                         "pinned upstream binary")
    _add_output(ver)
    ver.set_defaults(handler=_version)

    res = sub.add_parser("results", help="a past run's verdict, SLO table and failures")
    res.add_argument("run", nargs="?", metavar="RUN|BUNDLE",
                     help="a report directory, a run's name under --reports, a summary.json or "
                          "a .certification.tar.gz (default: the newest run under --reports)")
    res.add_argument("--reports", type=Path, default=_REPORTS,
                     help="where qualify wrote its runs (default: reports/ in the current "
                          "directory)")
    _add_output(res)
    res.set_defaults(handler=_results)

    cmp = sub.add_parser("compare", help="what changed from run A to run B, per SLO and per "
                         "test, regressions beyond noise flagged (exit 1 if any)")
    cmp.add_argument("run_a", metavar="RUN_A", help="the baseline run (as for results)")
    cmp.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    cmp.add_argument("--reports", type=Path, default=_REPORTS,
                     help="where run names are looked up (default: reports/)")
    _add_output(cmp)
    cmp.set_defaults(handler=_compare)

    comp = sub.add_parser("completion", help="print the shell code that completes zoneproof's "
                          "commands and options: eval \"$(zoneproof completion bash)\"")
    comp.add_argument("shell", choices=SHELLS, help="the shell")
    comp.set_defaults(handler=_completion)


def version_text(pinned: dict[str, Any]) -> list[str]:
    """``zoneproof version`` as text."""
    lines = [f"zoneproof {pinned['zoneproof']}", f"python {pinned['python']}",
             f"kubernetes {pinned['kubernetes']}", "pinned upstream binaries:"]
    lines += [f"  {name:<24}{entry['version']:<12}({entry['project']})"
              for name, entry in pinned["binaries"].items()]
    lines += [f"  {name:<24}{version}" for name, version in pinned["tools"].items()]
    return lines


def _version(args: argparse.Namespace) -> int:
    pinned = versions.pinned()
    console.emit(pinned, args.output, lambda: version_text(pinned))
    return 0


def _results(args: argparse.Namespace) -> int:
    found = results.load(results.locate(args.run, args.reports))
    console.emit(found.to_dict(), args.output, found.text)
    return 0


def _compare(args: argparse.Namespace) -> int:
    a = results.load(results.locate(args.run_a, args.reports))
    b = results.load(results.locate(args.run_b, args.reports))
    found = compare.compare(a, b)
    console.emit(found.to_dict(), args.output, found.text)
    return 1 if found.regressions else 0


def _completion(args: argparse.Namespace) -> int:
    print(shellcode(["zoneproof"], shell=args.shell), end="")
    return 0
