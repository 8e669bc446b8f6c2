"""Live mutant runs: the conformance suite against every broken webhook variant, one shared cluster.

``run_mutants`` brings a local cluster up once (or adopts a running one of that name),
runs ``python -m pytest <suite> -x -q -p no:cacheprovider --zp-webhook-variant=NAME
--zp-cluster-name=CLUSTER --junitxml=...`` for each variant (the plugin adopts the cluster
and leaves it up), and deletes the cluster at the end if it made it. Each run gives a
``MutantRun``; the verdict comes from the exit code and the JUnit report: a broken variant
is *caught* only if pytest exits 1 with a test *failure* (a setup error, a usage error or
a collection error does not count). ``problems`` says what is wrong with a set of runs,
``format_table`` renders them.
"""

from __future__ import annotations

import enum
import logging
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zoneproof import cluster
from zoneproof._util import processes
from zoneproof.cluster.interface import Progress
from zoneproof.components.ha_config import cases, variants

__all__ = [
    "DEFAULT_CLUSTER",
    "DEFAULT_SUITE",
    "MutantRun",
    "Verdict",
    "format_table",
    "problems",
    "run_mutants",
    "run_variant",
]

log = logging.getLogger(__name__)

DEFAULT_SUITE = cases.CASES_DIR.parent / "test_cases.py"
"""The live conformance module of the ha_config webhook (a source checkout)."""
DEFAULT_CLUSTER = "zp-hac-mutants"
_RUN_TIMEOUT_S = 900.0
_TESTS_FAILED = 1
_TIMED_OUT = -1


class Verdict(enum.StrEnum):
    """What one run of the suite says about its variant."""

    PASSED = "passed"
    """Every test passed (right for the reference, a survivor for a broken variant)."""
    FAILED = "failed"
    """A conformance test failed (a broken variant is caught; the reference is broken)."""
    INVALID = "invalid"
    """No verdict: usage/collection error, setup error or timeout; see ``output``."""


@dataclass(frozen=True, slots=True)
class MutantRun:
    """One suite run against one variant."""

    variant: str
    exit_code: int
    seconds: float
    failed_test: str | None
    """The first test with a failure in the JUnit report (the case that caught the variant)."""
    errored_tests: tuple[str, ...]
    output: str
    """The tail of pytest's output."""

    @property
    def verdict(self) -> Verdict:
        """PASSED, FAILED (a test failed, nothing errored) or INVALID."""
        if self.exit_code == 0 and not self.errored_tests:
            return Verdict.PASSED
        if self.exit_code == _TESTS_FAILED and self.failed_test and not self.errored_tests:
            return Verdict.FAILED
        return Verdict.INVALID

    @property
    def expected(self) -> Verdict:
        """The reference must pass; every broken variant must fail."""
        return Verdict.PASSED if self.variant == variants.REFERENCE.name else Verdict.FAILED

    @property
    def outcome(self) -> str:
        """A word for the table: ok / caught / SURVIVED / BROKEN REFERENCE / INVALID RUN."""
        if self.verdict is Verdict.INVALID:
            return "INVALID RUN"
        if self.variant == variants.REFERENCE.name:
            return "ok" if self.verdict is Verdict.PASSED else "BROKEN REFERENCE"
        return "caught" if self.verdict is Verdict.FAILED else "SURVIVED"


def _junit_outcomes(path: Path) -> tuple[str | None, tuple[str, ...]]:
    """(first failed test, errored tests) of a JUnit report; a missing report is one error."""
    if not path.is_file():
        return None, (f"no JUnit report at {path}",)
    failed: list[str] = []
    errored: list[str] = []
    for case in ET.parse(path).iter("testcase"):
        name = case.get("name", "?")
        if case.find("failure") is not None:
            failed.append(name)
        if case.find("error") is not None:
            errored.append(name)
    return (failed[0] if failed else None), tuple(errored)


def run_variant(variant: str, *, cluster_name: str, workdir: Path, suite: Path = DEFAULT_SUITE,
                extra_args: Sequence[str] = (), timeout_s: float = _RUN_TIMEOUT_S) -> MutantRun:
    """Run ``suite`` against ``variant`` on the running cluster ``cluster_name``, up to the first failure."""
    variants.get_variant(variant)  # ConfigError names the valid ones
    junit = workdir / f"{variant}.xml"
    junit.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", str(suite), "-x", "-q", "-p", "no:cacheprovider",
            f"--zp-webhook-variant={variant}", f"--zp-cluster-name={cluster_name}",
            f"--junitxml={junit}", *extra_args]
    started = time.monotonic()
    try:
        output, code = processes.run(argv, cwd=cases.CASES_DIR.parents[2], timeout_s=timeout_s,
                                     log_file=workdir / f"{variant}.log"), 0
    except processes.CommandError as exc:
        output, code = exc.output, exc.returncode
    except subprocess.TimeoutExpired:
        output, code = f"pytest did not finish within {timeout_s:g}s (killed)", _TIMED_OUT
    seconds = time.monotonic() - started
    failed, errored = _junit_outcomes(junit)
    log.info("variant %s: exit %d, first failure %s, %.1fs", variant, code, failed, seconds)
    return MutantRun(variant, code, seconds, failed, errored, processes.tail(output, 40))


def run_mutants(names: Sequence[str] | None = None, *, workdir: Path, cluster_name: str = DEFAULT_CLUSTER,
                suite: Path = DEFAULT_SUITE, progress: Progress = lambda _message: None,
                extra_args: Sequence[str] = ()) -> list[MutantRun]:
    """The reference and then each variant of ``names`` (default: all), on one cluster made once."""
    workdir.mkdir(parents=True, exist_ok=True)
    backend = cluster.get_backend("local")
    created = backend.get(cluster_name) is None
    if created:
        backend.create(cluster.ClusterSpec(name=cluster_name), progress=progress)
    try:
        runs = []
        for name in names or list(variants.VARIANTS):
            runs.append(run_variant(name, cluster_name=cluster_name, workdir=workdir, suite=suite,
                                    extra_args=extra_args))
            progress(f"{name}: {runs[-1].outcome} ({runs[-1].failed_test or '-'}, {runs[-1].seconds:.1f}s)")
        return runs
    finally:
        if created:
            backend.delete(cluster_name, progress=progress)


def problems(runs: Sequence[MutantRun]) -> list[str]:
    """What is wrong: a survivor, a failing reference, a run without a verdict (with its output)."""
    return [f"{run.variant}: expected {run.expected}, got {run.verdict} (exit {run.exit_code}"
            f"{', errors in ' + ', '.join(run.errored_tests) if run.errored_tests else ''}):\n{run.output}"
            for run in runs if run.verdict is not run.expected]


def format_table(runs: Sequence[MutantRun]) -> str:
    """variant | outcome | caught by | seconds, and the total."""
    width = max([len(r.variant) for r in runs] + [7])
    lines = [f"{'variant':<{width}}  {'outcome':<11}  {'seconds':>7}  caught by", "-" * (width + 60)]
    lines += [f"{r.variant:<{width}}  {r.outcome:<11}  {r.seconds:7.1f}  {r.failed_test or '-'}"
              for r in runs]
    caught = sum(r.outcome == "caught" for r in runs)
    broken = sum(r.variant != variants.REFERENCE.name for r in runs)
    total_s = sum(r.seconds for r in runs)
    lines.append(f"{caught}/{broken} broken variants caught; {total_s:.0f}s of pytest runs")
    return "\n".join(lines)
