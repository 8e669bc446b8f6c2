"""``zoneproof mutants controller``: prove the conformance suite catches every broken variant.

The suite runs once per variant in its own pytest process (``-x``: it stops at the first
failing test, so the suite orders cheap tests first). A mutant is *caught* when at least
one test fails against it; the reference must pass. A run that errors without any
failing test (a bed that did not come up) is no verdict and raises.
"""

from __future__ import annotations

import datetime as dt
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zoneproof import errors
from zoneproof.cli import qualify
from zoneproof.cluster.interface import Progress
from zoneproof.components.ha_controller import variants as ha_variants

__all__ = ["REFERENCE", "TARGETS", "Target", "check_component", "problems", "run_mutants"]

REFERENCE = "reference"
_TIMEOUT_S = 1200.0
_INTERRUPT_GRACE_S = 60.0
_FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)
_REASON = re.compile(r"^E +(.{0,160})", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Target:
    """A component's suite (paths relative to the checkout), its variant option, its mutants."""

    suite: tuple[str, ...]
    option: str
    mutants: tuple[str, ...]


TARGETS: dict[str, Target] = {
    "controller": Target(("conformance/ha_controller/test_controller.py",),
                         "--zp-controller-variant",
                         tuple(v for v in ha_variants.VARIANTS if v != REFERENCE)),
}


def _run_suite(argv: list[str], timeout_s: float) -> tuple[int, str]:
    """Run pytest; on timeout interrupt it (its fixtures delete their beds), then kill it."""
    proc = subprocess.Popen(argv, cwd=qualify.repo_root(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=_INTERRUPT_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
        raise errors.ZoneproofError(
            f"suite timed out after {timeout_s:g}s: {' '.join(argv)}\n{output[-2000:]}") from None
    return proc.returncode, output


def run_mutants(component: str, variants: list[str], suite: list[str], option: str,
                extra: list[str], *, progress: Progress | None = None,
                timeout_s: float = _TIMEOUT_S, log_dir: Path | None = None) -> dict[str, bool]:
    """Run ``suite`` once per variant; variant → True when the suite failed (caught).

    Each run's output goes to ``log_dir/<component>-<variant>.log`` when given.

    Raises ZoneproofError when a run is no verdict: pytest could not run (exit ≥ 2) or it
    exited 1 with errors but no failed test.
    """
    results: dict[str, bool] = {}
    for variant in variants:
        argv = [sys.executable, "-m", "pytest", *suite, "-x", "-q", "-p", "no:cacheprovider",
                f"{option}={variant}", *extra]
        start = time.monotonic()
        code, output = _run_suite(argv, timeout_s)
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            (log_dir / f"{component}-{variant}.log").write_text(output)
        failed = _FAILED.findall(output)
        if code > 1 or (code == 1 and not failed):
            raise errors.ZoneproofError(
                f"{component} suite gave no verdict against {variant!r} (pytest exit {code}): "
                f"{' '.join(argv)}\n{output[-3000:]}")
        results[variant] = code == 1
        if progress is not None:
            reason = next(iter(_REASON.findall(output)), "")
            verdict = (f"caught by {failed[0].split('::')[-1]}: {reason}" if failed
                       else "passed the suite")
            progress(f"{component} {variant}: {verdict} ({time.monotonic() - start:.0f}s)")
    return results


def check_component(component: str, only: Sequence[str] | None = None, *,
                    progress: Progress | None = None, extra: Sequence[str] = ()
                    ) -> dict[str, bool]:
    """The reference, then each mutant (or those in ``only``) of ``component``.

    Run logs go to ``reports/mutants-<UTC time>/`` of the checkout.
    """
    target = TARGETS[component]
    unknown = sorted(set(only or ()) - set(target.mutants))
    if unknown:
        raise errors.ConfigError(f"unknown {component} mutant(s) {', '.join(unknown)}: choose "
                                 f"from {', '.join(target.mutants)}")
    chosen = [m for m in target.mutants if not only or m in only]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    log_dir = qualify.repo_root() / "reports" / f"mutants-{stamp}"
    if progress is not None:
        progress(f"{component} mutants: logs in {log_dir}")
    return run_mutants(component, [REFERENCE, *chosen], list(target.suite), target.option,
                       list(extra), progress=progress, log_dir=log_dir)


def problems(results: dict[str, bool]) -> list[str]:
    """What is wrong with a mutant run: a failing reference, surviving mutants."""
    found = [f"{REFERENCE} fails the suite"] if results.get(REFERENCE) else []
    return found + [f"{name} survived" for name, caught in results.items()
                    if name != REFERENCE and not caught]


def main(component: str, only: Sequence[str] | None, progress: Progress) -> int:
    """CLI body: print the table; 0 only when the reference passes and every mutant is caught."""
    start = time.monotonic()
    results = check_component(component, only, progress=progress)
    for name, caught in results.items():
        state = ("FAILS (should pass)" if caught else "passes") if name == REFERENCE else (
            "caught" if caught else "SURVIVED")
        print(f"{name:24} {state}")
    found = problems(results)
    progress(f"{len(results)} runs in {time.monotonic() - start:.0f}s: "
             f"{'; '.join(found) if found else 'reference passes, every mutant caught'}")
    return 1 if found else 0
