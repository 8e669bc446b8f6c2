"""One name per concept: a command-line option ``--X`` is the pytest plugin's ``--zp-X``.

The options that have no twin are listed here with why (``CLI_ONLY``, ``PYTEST_ONLY``);
older spellings of the command line stay one release as deprecated aliases (``DEPRECATED``:
hidden from the help, a warning naming the new spelling). ``-o`` is the output format on
every command, and ``-n`` is no zoneproof option (kubectl users read it as the namespace).
tests/unit/cli/test_option_names.py holds the command line and the plugin to this;
docs/reference/options.md is the table for users.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["CLI_ONLY", "DEPRECATED", "PYTEST_ONLY", "add_deprecated", "warning"]

#: Old spelling -> the current one (the release after 0.1 drops them).
DEPRECATED: dict[str, str] = {
    "--name": "--cluster-name",
    "--slo": "--slo-file",
    "--only": "--experiments",  # mutants: --variants
    "--skip": "--skip-experiments",
    "-n": "--workers",
    "-o": "--bundle",  # certify only: everywhere else -o is the output format
    "--output": "--bundle",  # certify only
}

#: Command-line options without a pytest twin, and why.
CLI_ONLY: dict[str, str] = {
    "workers": "pytest's own -n (pytest-xdist) is the worker count there",
    "reports": "the directory of many runs (qualify makes <reports>/<UTC time>); the plugin "
               "writes one run's reports into --zp-report-dir",
    "self-check": "pytest selects the broken twins by marker (-m self_check)",
    "no-html": "the HTML report is rendered by qualify after pytest ends",
    "allure": "in pytest, allure-pytest's own --alluredir",
    "keep-on-failure": "up only: pytest's beds are torn down by their run",
    "node-monitor-grace-period": "up only: a bed's timing, fixed for the suites' bounds",
    "toleration-seconds": "up only: a bed's timing, fixed for the suites' bounds",
    "all-leaked": "down only",
    "export": "kubeconfig only",
    "key": "certify and verify: the signing or public key",
    "bundle": "certify: where the signed bundle is written",
    "force": "build only",
    "node-image": "build only",
    "images": "build only",
    "service": "webhook-cert only",
    "namespace": "webhook-cert only: the webhook Service's namespace",
    "cgroup-v1": "kind-config only",
    "write": "kind-config only",
    "runs": "bench only",
    "json": "bench only: also write the figures to a file",
    "variants": "mutants only: which broken variants run",
    "implementation": "mutants only",
    "output": "-o text|json|yaml: how a result is printed (pytest prints its own)",
}
#: Every backend's own options (``--port-base``...) are command-line only too: pytest's
#: beds are made with the backend's defaults.
BACKEND_OPTIONS_WHY = "a backend's own option for `zoneproof up`; pytest's beds use its defaults"

#: pytest options without a command-line twin, and why.
PYTEST_ONLY: dict[str, str] = {
    "report-dir": "one run's report directory: qualify sets it to <--reports>/<UTC time>",
    "controller-schedule": "replays one saved case of the generated controller suite (a "
                           "developer's repro, not a gate run)",
}


def warning(old: str, new: str) -> str:
    """The one line a deprecated spelling prints."""
    return (f"zoneproof: warning: {old} is deprecated and goes in the next release: "
            f"use {new}")


class _Deprecated(argparse.Action):
    """An older spelling: warns on stderr naming the new one, then stores as it does."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str,
                 **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(warning(option_string or self.option_strings[0], self.new), file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated(parser: argparse.ArgumentParser, new: str, *old: str, **kwargs: Any) -> None:
    """Accept the ``old`` spellings of the option ``new`` (added before): its ``dest``,
    ``type`` and ``nargs``, hidden from the help."""
    (action,) = [a for a in parser._actions if new in a.option_strings]
    typed: dict[str, Any] = {"type": action.type} if action.type is not None else {}
    parser.add_argument(*old, dest=action.dest, action=_Deprecated, new=new,
                        help=argparse.SUPPRESS, metavar=action.metavar, nargs=action.nargs,
                        default=argparse.SUPPRESS, **typed, **kwargs)
