"""``zoneproof version`` and ``completion``: commands that only read and print
(``-o text|json|yaml``)."""

from __future__ import annotations

import argparse
from typing import Any

from argcomplete.shell_integration import shellcode

from zoneproof.cli import console
from zoneproof.report import versions

__all__ = ["SHELLS", "add_commands", "version_text"]

SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=console.FORMATS, default="text",
                        help="output format (default: text)")


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The read-only commands, each with its handler."""
    ver = sub.add_parser("version", help="versions of zoneproof, Python, Kubernetes and every "
                         "pinned upstream binary")
    _add_output(ver)
    ver.set_defaults(handler=_version)

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


def _completion(args: argparse.Namespace) -> int:
    print(shellcode(["zoneproof"], shell=args.shell), end="")
    return 0
