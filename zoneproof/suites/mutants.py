"""``zoneproof mutants webhook|controller``: prove a conformance suite catches every broken variant.

The variants are those of a registered implementation (the component registry; default
the reference). The suite runs once per variant, each in its own pytest process (``-x``:
it stops at the first failing test) given the component as ``--zp-components``, all on
one local cluster made once (or adopted if it runs; deleted at the end only if made
here). The status of a run comes from its exit code and its JUnit report: a broken
variant is *caught* only if pytest exits 1 with a test *failure* (a setup error, a usage
or collection error or a timeout is INVALID). The correct variant must pass.
"""

from __future__ import annotations

import datetime as dt
import enum
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zoneproof import cluster, errors
from zoneproof._util import processes
from zoneproof.cluster.interface import Progress
from zoneproof.components.harness import kinds, registry
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.registry import REFERENCE
from zoneproof.components.harness.sources.registered import Registered
from zoneproof.exit_codes import ExitCode
from zoneproof.suites import qualify

__all__ = ["DEFAULT_CLUSTER", "REFERENCE", "SUITES", "MutantRun", "Target", "SuiteStatus",
           "format_table", "junit_outcomes", "main", "problems", "run_mutants", "run_variant",
           "target"]

DEFAULT_CLUSTER = "zp-mutants"
_RUN_TIMEOUT_S = 1200.0
_INTERRUPT_GRACE_S = 60.0
_TESTS_FAILED = 1
_TIMED_OUT = -1


#: The conformance suite of each kind of component (paths relative to the checkout).
SUITES: dict[Kind, tuple[str, ...]] = {kind: kind.spec.mutant_suite for kind in kinds.every()}


@dataclass(frozen=True, slots=True)
class Target:
    """A suite and the variants of a registered implementation it runs against."""

    suite: tuple[str, ...]
    kind: Kind
    implementation: str = REFERENCE
    variants: tuple[str, ...] = ()
    """The implementation's variants, the correct one first."""

    @property
    def correct(self) -> str:
        """The variant that must pass."""
        return self.variants[0]

    @property
    def mutants(self) -> tuple[str, ...]:
        """Every broken variant."""
        return self.variants[1:]

    def pytest_args(self, variant: str) -> list[str]:
        """The option that puts ``variant`` under test (the other kind: the reference)."""
        chosen = Components(Component(self.kind, Registered(self.implementation, variant)))
        return [f"--zp-components={chosen.to_json()}"]


def target(kind: str, implementation: str = REFERENCE) -> Target:
    """The suite of ``kind`` against ``implementation``'s variants (from the registry)."""
    if kind not in SUITES:
        raise errors.ConfigError(f"unknown component kind {kind!r}: choose one of "
                                 f"{', '.join(SUITES)}")
    found = registry.implementation(kinds.get(kind), implementation)
    return Target(SUITES[kinds.get(kind)], kinds.get(kind), implementation, found.variants)


class SuiteStatus(enum.StrEnum):
    """What one run of the suite says about its variant."""

    PASSED = "passed"
    """Every test passed (right for the reference, a survivor for a broken variant)."""
    FAILED = "failed"
    """A conformance test failed (a broken variant is caught; the reference is broken)."""
    INVALID = "invalid"
    """No result: usage/collection error, setup error or timeout; see ``output``."""


@dataclass(frozen=True, slots=True)
class MutantRun:
    """One suite run against one variant."""

    variant: str
    exit_code: int
    seconds: float
    failed_test: str | None
    """The first test with a failure in the JUnit report (the check that caught the variant)."""
    errored_tests: tuple[str, ...]
    output: str
    """The tail of pytest's output."""
    correct: str = REFERENCE
    """The variant of the implementation that must pass."""

    @property
    def status(self) -> SuiteStatus:
        """PASSED, FAILED (a test failed, nothing errored) or INVALID."""
        if self.exit_code == 0 and not self.errored_tests:
            return SuiteStatus.PASSED
        if self.exit_code == _TESTS_FAILED and self.failed_test and not self.errored_tests:
            return SuiteStatus.FAILED
        return SuiteStatus.INVALID

    @property
    def expected(self) -> SuiteStatus:
        """The correct variant must pass; every broken variant must fail."""
        return SuiteStatus.PASSED if self.variant == self.correct else SuiteStatus.FAILED

    @property
    def outcome(self) -> str:
        """A word for the table: ok / caught / SURVIVED / BROKEN REFERENCE / INVALID RUN."""
        if self.status is SuiteStatus.INVALID:
            return "INVALID RUN"
        if self.variant == self.correct:
            return "ok" if self.status is SuiteStatus.PASSED else "BROKEN REFERENCE"
        return "caught" if self.status is SuiteStatus.FAILED else "SURVIVED"


def junit_outcomes(path: Path) -> tuple[str | None, tuple[str, ...]]:
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


def _run_suite(argv: list[str], log_file: Path, timeout_s: float) -> int:
    """Run pytest into ``log_file``; on timeout interrupt it (its fixtures delete their
    beds), then kill it. The exit code, or -1 on timeout."""
    with log_file.open("w") as sink:
        proc = subprocess.Popen(argv, cwd=qualify.repo_root(), stdout=sink,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=_INTERRUPT_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            sink.write(f"\nzoneproof: pytest did not finish within {timeout_s:g}s (interrupted)\n")
            return _TIMED_OUT


def run_variant(target: Target, variant: str, *, cluster_name: str, workdir: Path,
                extra_args: Sequence[str] = (), timeout_s: float = _RUN_TIMEOUT_S) -> MutantRun:
    """Run ``target``'s suite against ``variant`` on the cluster ``cluster_name``."""
    junit = workdir / f"{variant}.xml"
    junit.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", *target.suite, "-x", "-q", "-p", "no:cacheprovider",
            *target.pytest_args(variant), f"--zp-cluster-name={cluster_name}",
            f"--junitxml={junit}", *extra_args]
    log_file = workdir / f"{variant}.log"
    started = time.monotonic()
    code = _run_suite(argv, log_file, timeout_s)
    failed, errored = junit_outcomes(junit)
    return MutantRun(variant, code, time.monotonic() - started, failed, errored,
                     processes.tail(log_file.read_text(errors="replace"), 40), target.correct)


def run_mutants(component: str, names: Sequence[str] | None = None, *, workdir: Path,
                implementation: str = REFERENCE, cluster_name: str = DEFAULT_CLUSTER,
                progress: Progress = lambda _: None, extra_args: Sequence[str] = (),
                timeout_s: float = _RUN_TIMEOUT_S) -> list[MutantRun]:
    """The correct variant of ``implementation`` and then each mutant of ``names`` (default:
    all) on one cluster."""
    suite = target(component, implementation)
    unknown = sorted(set(names or ()) - set(suite.mutants))
    if unknown:
        raise errors.ConfigError(f"unknown {component} mutant(s) {', '.join(unknown)} of "
                                 f"{implementation!r}: choose from {', '.join(suite.mutants)}")
    chosen = [suite.correct, *(m for m in suite.mutants if not names or m in names)]
    workdir.mkdir(parents=True, exist_ok=True)
    backend = cluster.get_backend(cluster.DEFAULT_BACKEND)
    created = backend.get(cluster_name) is None
    if created:
        backend.create(cluster.ClusterSpec(name=cluster_name), progress=progress)
    try:
        runs = []
        for name in chosen:
            runs.append(run_variant(suite, name, cluster_name=cluster_name, workdir=workdir,
                                    extra_args=extra_args, timeout_s=timeout_s))
            progress(f"{component} {name}: {runs[-1].outcome} ({runs[-1].failed_test or '-'}, "
                     f"{runs[-1].seconds:.0f}s)")
        return runs
    finally:
        if created:
            backend.delete(cluster_name, progress=progress)


def problems(runs: Sequence[MutantRun]) -> list[str]:
    """What is wrong: a survivor, a failing reference, a run without a result (with its output)."""
    return [f"{run.variant}: expected {run.expected}, got {run.status} (exit {run.exit_code}"
            f"{', errors in ' + ', '.join(run.errored_tests) if run.errored_tests else ''}):\n"
            f"{run.output}" for run in runs if run.status is not run.expected]


def format_table(runs: Sequence[MutantRun]) -> str:
    """variant | outcome | seconds | caught by, and the total."""
    width = max([len(r.variant) for r in runs] + [7])
    lines = [f"{'variant':<{width}}  {'outcome':<11}  {'seconds':>7}  caught by",
             "-" * (width + 60)]
    lines += [f"{r.variant:<{width}}  {r.outcome:<11}  {r.seconds:7.1f}  {r.failed_test or '-'}"
              for r in runs]
    caught = sum(r.outcome == "caught" for r in runs)
    broken = sum(r.variant != r.correct for r in runs)
    lines.append(f"{caught}/{broken} broken variants caught; "
                 f"{sum(r.seconds for r in runs):.0f}s of pytest runs")
    return "\n".join(lines)


def main(component: str, only: Sequence[str] | None, progress: Progress,
         implementation: str = REFERENCE) -> int:
    """CLI body: logs in reports/mutants-<UTC>/; 0 only when the correct variant passes and
    every mutant is caught."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    workdir = Path("reports").resolve() / f"mutants-{component}-{stamp}"
    progress(f"{component} {implementation!r} mutants: logs in {workdir}")
    runs = run_mutants(component, only, workdir=workdir, implementation=implementation,
                       progress=progress)
    print(format_table(runs))
    found = problems(runs)
    for problem in found:
        progress(problem)
    return ExitCode.FAIL if found else ExitCode.PASS
