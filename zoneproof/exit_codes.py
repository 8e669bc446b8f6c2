"""Every zoneproof command's exit codes: one table (docs/reference/exit-codes.md prints it).

A run's verdict maps onto it (``slo.verdict.exit_code``); a refusal or a failure of the
environment is ``ERROR``, never a verdict; argparse's usage errors are ``USAGE``.
"""

from __future__ import annotations

import enum

__all__ = ["MEANINGS", "ExitCode"]


class ExitCode(enum.IntEnum):
    """What a zoneproof command's exit status says."""

    PASS = 0
    FAIL = 1
    USAGE = 2
    PARTIAL = 3
    ERROR = 4
    SIGINT = 130
    SIGTERM = 143


#: What each code means, for every command (the documented table).
MEANINGS: dict[ExitCode, str] = {
    ExitCode.PASS: "done; a run PASSed (or was PARTIAL only where you asked: --experiments, "
                   "--skip-experiments, -k); a bundle verified with verdict PASS; compare flagged no "
                   "regression",
    ExitCode.FAIL: "a run's verdict FAIL (a test failed, an SLO was not met, nothing ran, a "
                   "report is missing); a bundle not verified or verified FAIL; compare "
                   "flagged a regression; status: the bed is not healthy; mutants: a broken "
                   "variant was not caught",
    ExitCode.USAGE: "the command line is wrong (unknown option, a value out of range); "
                    "nothing was started",
    ExitCode.PARTIAL: "a run's (or a verified bundle's) verdict PARTIAL: nothing failed, but "
                      "tests that should have judged did not, and you did not ask for that",
    ExitCode.ERROR: "zoneproof could not do what was asked: a bad file or setting (refused "
                    "before anything starts), or the environment failed (a bed did not come "
                    "up, a binary could not be built, a cluster did not answer); the message "
                    "names the fix",
    ExitCode.SIGINT: "interrupted by Ctrl-C (SIGINT): cleaned up, verdict INTERRUPTED",
    ExitCode.SIGTERM: "interrupted by SIGTERM: cleaned up, verdict INTERRUPTED",
}
