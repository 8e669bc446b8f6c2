"""``zoneproof qualify``: the release gate — build, up, conformance + chaos, reports, down.

It runs what judges the components under test: the conformance suites and every chaos
experiment. zoneproof's own tests (tests/integration) run in ``make test``, and so does the
self-check (the broken twins that prove an experiment catches a broken component), which
``--self-check`` adds here; the report says whether it ran.

Everything lands in ``reports/<UTC run>/``: junit.xml, allure-results and the allure HTML
report, summary.json (verdict, each SLO result, versions) and, per chaos
experiment, its chaostoolkit journal, timeline and timeline plots. The exit code is 0
only if every test passed, every SLO held and the reports were written; the verdict and
summary.json name the cluster tested (URL, kube-system UID, version). On a backend that
makes no clusters (``existing``: your cluster) destructive tests are skipped with the
reason and chaos experiments cannot be asked for: no other cluster stands in for yours.
With ``--allow-destructive`` they run on your cluster itself (node faults through the node
agent, installed for the run and removed with it).
Interrupted (Ctrl-C, SIGTERM), the suite gets to clean up and an empty report directory
is removed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoneproof import cluster, errors
from zoneproof._util import locations, reaping
from zoneproof.chaos import catalog
from zoneproof.cluster.interface import Backend, Progress
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.components.harness import kinds
from zoneproof.components.harness.component import Components
from zoneproof.report import allure_html, page, results, summary
from zoneproof.report.testids import experiment_of
from zoneproof.runs import identity, ownership
from zoneproof.slo import load_slos, verdict
from zoneproof.slo.verdict import RunVerdict

__all__ = ["SUITES", "Options", "Qualification", "check", "default_workers", "execute",
           "experiment_of", "experiments", "qualify", "repo_root", "suites"]

#: What qualification runs, relative to the repository root: every kind's conformance suites
#: and the chaos experiments (``summary.GATE_SUITES``), not zoneproof's own tests. The order
#: in which their work goes out is the scheduler's (longest first by ``expected_seconds``:
#: fixtures/xdist_groups.py); among lone tests of one length, collection order: chaos first.
SUITES = (*summary.GATE_SUITES["chaos"], *(d for suite, dirs in summary.GATE_SUITES.items()
                                           if suite != "chaos" for d in dirs))
#: The scale profile (``qualify --scale N``): it makes its own bed of N nodes per zone.
SCALE_SUITE = "chaos/scale"


def default_workers() -> int:
    """pytest-xdist workers when not told: one per core, at most 8. The gate's tests mostly
    wait, so more beds than cores overlap more waits, but the history traffic needs CPU
    before each fault: on 2 cores of a slower host, 3 and 4 workers starved it (VOID twice,
    a failure without a finding) while 2 ran it at 145 ops/s and took about as long
    (docs/gate.md). 8 is about the number of the gate's long work units."""
    return min(8, len(os.sched_getaffinity(0)))


@dataclass(frozen=True, slots=True)
class Options:
    """What ``zoneproof qualify`` was asked for."""

    keep_cluster: bool = False
    workers: int = field(default_factory=default_workers)
    slo_file: Path | None = None
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    html: bool = True
    """Write the HTML report (``report.html``: one page, no Node needed)."""
    allure: bool = False
    """Also render the Allure report (Node.js; its history carried over in the reports root)."""
    allow_destructive: bool = False
    reports: Path | None = None
    """Parent of the run's report directory (default: reports/ in the current directory)."""
    components: Components = field(default_factory=Components)
    """The webhook and controller under test (passed to pytest as ``--zp-components``)."""
    pytest_args: list[str] = field(default_factory=list)
    scale: int = 0
    """Nodes per zone: run the scale profile (``SCALE_SUITE``) alone, on a bed of its own,
    instead of the qualification (0: the qualification)."""
    scale_pods: int = 0
    """Pods of the scale profile (0: its default, 100 × ``scale``)."""
    thorough: bool = False
    """Generated conformance suites draw ten times more inputs (nightly runs)."""
    seed: int | None = None
    """Seed of the generated inputs (None: drawn; the report shows it)."""
    self_check: bool = False
    """Also run the self-check (``summary.SELF_CHECK``: the broken twins)."""


def repo_root() -> Path:
    """The directory holding the suites: the checkout, or the installed ``zoneproof_suites``."""
    return locations.suites_root()


def suites(root: Path) -> list[str]:
    """``SUITES`` that ``root`` holds (an installed zoneproof ships no tests/integration)."""
    return [suite for suite in SUITES if (root / suite).is_dir()]


def experiments(root: Path) -> list[str]:
    """Names of the chaos experiments (chaos/*.yaml stems)."""
    return catalog.names(root / "chaos")


def check(options: Options, backend: Backend) -> None:
    """Refuse bad input before anything is built or started (ConfigError names the fix)."""
    _check(options, repo_root(), backend)


def _check(options: Options, root: Path, backend: Backend) -> None:
    """Refuse bad input before anything is built or started."""
    if options.slo_file is not None:
        load_slos(options.slo_file)  # ConfigError lists every problem
    known = experiments(root)
    unknown = sorted(set(options.only + options.skip) - set(known))
    if unknown:
        raise errors.ConfigError(f"unknown experiment(s) {', '.join(unknown)}: choose from "
                                 f"{', '.join(known)}")
    if options.workers < 1:
        raise errors.ConfigError(f"--workers must be >= 1, got {options.workers}")
    if options.scale < 0:
        raise errors.ConfigError(f"--scale takes a number of nodes per zone >= 1, got "
                                 f"{options.scale}")
    if options.scale_pods < 0 or (options.scale_pods and not options.scale):
        raise errors.ConfigError(f"--scale-pods takes a number of pods >= 1 and goes with "
                                 f"--scale NODES_PER_ZONE, got --scale-pods "
                                 f"{options.scale_pods} --scale {options.scale}")
    if options.scale:
        if options.only or options.skip or options.self_check:
            raise errors.ConfigError("--scale runs the scale profile alone: drop --experiments/"
                                     "--skip-experiments/--self-check (qualify the experiments "
                                     "in a run of their own)")
        if not backend.traits.holds_nodes_at_scale:
            raise errors.ConfigError(f"--scale needs a backend whose beds hold nodes at scale "
                                     f"(kwok), not {backend.name}: use --backend local")
    if options.only and not backend.traits.makes_clusters and not options.allow_destructive:
        raise errors.ConfigError(
            f"--experiments {' '.join(options.only)}: chaos experiments run on beds zoneproof "
            f"makes, and the {backend.name} backend makes none (zoneproof never substitutes another "
            "cluster for the one under test): qualify them with --backend local or kind, or "
            "on this cluster itself with --allow-destructive (node faults through the node "
            "agent)")


def _reports_dir(options: Options, root: Path) -> Path:
    """``<reports>/<UTC time>``, made now; ConfigError naming the fix if it cannot be."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    reports = (options.reports or Path("reports")).resolve() / stamp
    try:
        reports.mkdir(parents=True)
    except OSError as exc:
        raise errors.ConfigError(f"cannot create the reports directory {reports} "
                                 f"({exc.strerror or exc}): pass --reports a writable "
                                 "directory") from None
    return reports


def _drop_if_empty(reports: Path) -> None:
    """Remove ``reports`` if no file was written under it (an interrupted start)."""
    if reports.is_dir() and not any(p.is_file() for p in reports.rglob("*")):
        shutil.rmtree(reports, ignore_errors=True)


def _markers(backend: Backend, *, self_check: bool = False) -> str:
    """Mutation runs never; the self-check when asked; a backend's own tests (its
    ``tests_marker``) only when qualifying that backend."""
    others = [cluster.backend_type(name).traits.tests_marker for name in cluster.backend_names()
              if name != backend.name]
    left_out = ["mutants", "long", *([] if self_check else [summary.SELF_CHECK]), *others]
    return " and ".join(f"not {marker}" for marker in left_out if marker)


def _pytest_argv(backend: Backend, spec: ClusterSpec, reports: Path, options: Options,
                 kubeconfig: Path | None) -> list[str]:
    sized = [f"--zp-scale-pods={options.scale_pods}"] if options.scale_pods else []
    chosen = [SCALE_SUITE, "-n", "0", f"--zp-scale={options.scale}", *sized] if options.scale \
        else [*suites(repo_root()), "-n", str(options.workers)]
    root = repo_root()
    argv = [sys.executable, "-m", "pytest", *chosen, "-c", str(root / "pytest.ini"),
            f"--rootdir={root}",
            "--dist", "loadgroup", "-m", _markers(backend, self_check=options.self_check),
            "-p", "no:cacheprovider",
            f"--zp-backend={backend.name}", f"--zp-cluster-name={spec.name}",
            f"--zp-report-dir={reports}", f"--junitxml={reports / 'junit.xml'}",
            f"--alluredir={reports / 'allure-results'}",
            f"--zp-components={options.components.to_json()}"]
    if kubeconfig is not None:
        argv.append(f"--zp-kubeconfig={kubeconfig}")
    if options.allow_destructive:
        argv.append("--zp-allow-destructive")
    if options.thorough:
        argv.append("--zp-thorough")
    if options.seed is not None:
        argv.append(f"--zp-seed={options.seed}")
    if options.slo_file is not None:
        argv.append(f"--zp-slo-file={options.slo_file.resolve()}")
    if options.only:
        argv.append(f"--zp-experiments={','.join(options.only)}")
    if options.skip:
        argv.append(f"--zp-skip-experiments={','.join(options.skip)}")
    return [*argv, *options.pytest_args]


def describe(run: summary.Summary) -> list[str]:
    """Lines for the terminal: each SLO, each chaos experiment's wall time, failures."""
    counts = run.slo_counts
    lines = results.slo_table(run) if counts else []
    if counts.get("VOID"):
        lines.append(f"VOID: {counts['VOID']} SLO result(s) could not judge their run (e.g. "
                     "too little traffic before the fault): not passed")
    lines += time_table(run)
    lines += [f"RAN AGAIN {o.nodeid}: {o.void_runs} run(s) of it judged nothing (VOID) first"
              for o in run.outcomes if o.void_runs]
    lines.append(_self_check_line(run))
    lines += [f"FAILED {o.nodeid}" for o in run.failures]
    lines += [f"INTERRUPTED {o.nodeid}" for o in run.outcomes if o.outcome == summary.INTERRUPTED]
    lines += [f"NOT JUDGED {n.test}: {n.reason}" + (" (as asked)" if n.asked else "")
              for n in run.not_judged]
    lines += [f"cluster {c.role}: {c.describe()}" for c in run.clusters]
    ran = run.versions.get("components", {})
    for kind in kinds.every():
        if kind in ran:
            lines += [f"{kind} under test: {_ran(entry)}" for entry in ran[kind]["ran"]] or [
                f"{kind} under test: {ran[kind].get('note', 'never started')}"]
    return lines


def time_table(run: summary.Summary) -> list[str]:
    """Where the run's time went: per suite (tests, summed time, set-up share, span on the
    run's clock) and per chaos experiment (outcome, time, set-up, start, worker)."""
    if not run.outcomes:
        return []
    lines = [f"{'suite':<28}{'tests':>6}{'busy s':>9}{'set-up s':>10}{'wall s':>8}  workers"]
    lines += [f"{r['suite']:<28}{r['tests']:>6}{r['busy_s']:>9.1f}{r['setup_s']:>10.1f}"
              f"{_figure(r['wall_s']):>8}  {','.join(r['workers']) or '-'}"
              for r in run.suite_times()]
    experiments = run.experiment_times()
    if experiments:
        lines.append(f"{'experiment':<36}{'outcome':<13}{'time s':>7}{'set-up s':>10}"
                     f"{'start s':>9}  worker")
        lines += [f"{r['experiment']:<36}{r['outcome']:<13}{r['duration_s']:>7.1f}"
                  f"{r['setup_s']:>10.1f}{_figure(r['start_s']):>9}  {r['worker'] or '-'}"
                  for r in experiments]
    return lines


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _self_check_line(run: summary.Summary) -> str:
    """Whether the self-check (the broken twins) ran, and how it went."""
    found = run.self_check
    if not found["ran"]:
        return ("self-check: not run (the broken twins that prove the experiments catch a "
                "broken component: --self-check adds them; make test runs them)")
    counts = ", ".join(f"{n} {outcome}" for outcome, n in found["counts"].items())
    return f"self-check: ran ({counts})"


def _ran(entry: dict[str, Any]) -> str:
    """One component that ran, for the terminal."""
    what = entry["component"]
    source = {"registered": f"{what.get('name')} variant {what.get('variant')}",
              "command": f"command {what.get('command')!r}", "url": f"at {what.get('url')}"}
    digest = f", {entry['executable']} sha256 {entry['sha256'][:16]}…" if "sha256" in entry else ""
    return f"{source.get(what['source'], what['source'])}{digest} ({entry['starts']} starts)"


def _report(reports: Path, options: Options, progress: Progress) -> summary.Summary | None:
    """Print the summary, render the HTML report; None if a report is missing."""
    summary_path = reports / "summary.json"
    if not summary_path.is_file():
        progress(f"no {summary_path}: the suite did not finish its run")
        return None
    try:
        run = summary.load(summary_path)
    except errors.ConfigError as exc:
        progress(str(exc))
        return None
    for line in describe(run):
        progress(line)
    if not options.html:
        return run
    try:
        progress(f"HTML report: {page.write(run, reports, title=f'zoneproof run {reports.name}')}")
    except OSError as exc:
        progress(f"HTML report failed: {exc}")
        return None
    if not options.allure:
        return run
    try:
        index = allure_html.generate(reports / "allure-results", reports / "allure-report",
                                     name=f"zoneproof qualification {reports.name}",
                                     history=reports.parent / allure_html.HISTORY)
    except (errors.ZoneproofError, OSError) as exc:
        progress(f"allure HTML report failed: {exc}")
        return None
    progress(f"allure HTML report: {index}")
    return run


def _verdict(run: summary.Summary | None, code: int) -> tuple[str, int]:
    """The qualification's verdict and exit code: the summary's (read, never judged again);
    INTERRUPTED when a signal ended it; FAIL when the run wrote no summary or its pytest
    failed after writing one."""
    if _interrupted(code):
        return str(RunVerdict.INTERRUPTED), code
    if run is None:
        return str(RunVerdict.FAIL), code or 1
    if run.verdict == RunVerdict.INTERRUPTED:  # a signal reached the suite, not qualify
        number = signal.Signals.__members__.get(run.interrupted_by)
        return run.verdict, verdict.exit_code(run.verdict, signal_number=number)
    if run.verdict in (RunVerdict.PASS, RunVerdict.PARTIAL) and code != 0:
        return str(RunVerdict.FAIL), code
    return run.verdict, verdict.exit_code(run.verdict, run.not_judged)


def _interrupted(code: int) -> bool:
    """An exit status of 128 + a signal (``_run_suite`` of an interrupted qualify)."""
    return code > 128


@dataclass(frozen=True, slots=True)
class Qualification:
    """A finished qualification: its exit code, report directory and verdict."""

    code: int
    reports: Path
    verdict: str = str(RunVerdict.FAIL)


def _scale_profile(backend: Backend, spec: ClusterSpec, options: Options, reports: Path,
                   progress: Progress) -> Qualification:
    """The scale profile alone: its test makes (and deletes) a bed of its own."""
    pods = f"{options.scale_pods} pods" if options.scale_pods else "its default pods"
    bed = (f"a {backend.name} bed of {options.scale} nodes in each of 3 zones and {pods}, made "
           "by the scale profile")
    progress(f"scale profile on {bed}; reports in {reports}")
    code = _run_suite(_pytest_argv(backend, spec, reports, options, None), reports)
    found, code = _verdict(_report(reports, options, progress), code)
    progress(f"scale profile {found} (exit {code}) on {bed}; reports: {reports}")
    return Qualification(code, reports, found)


def _run_suite(argv: list[str], reports: Path) -> int:
    """pytest's exit status; interrupted (Ctrl-C, SIGTERM), 128 + the signal once pytest
    cleaned up (its summary, if written, says INTERRUPTED)."""
    try:
        return reaping.run_child(argv, cwd=repo_root())
    except KeyboardInterrupt:
        received = reaping.interrupted_by()
        return verdict.exit_code(RunVerdict.INTERRUPTED,
                                 signal_number=int(received) if received else None)


def qualify(backend: Backend, spec: ClusterSpec, options: Options, *, kubeconfig: Path | None,
            progress: Progress) -> int:
    """Run the qualification; 0 only if everything passed and the reports were written."""
    return execute(backend, spec, options, kubeconfig=kubeconfig, progress=progress).code


def execute(backend: Backend, spec: ClusterSpec, options: Options, *, kubeconfig: Path | None,
            progress: Progress) -> Qualification:
    """``qualify``, returning where the reports are too (certify packs them). The exit code
    is the run's verdict's (``slo.verdict.exit_code``): 0 PASS (or a PARTIAL run of a
    subset the user asked for), 1 FAIL, 3 PARTIAL, 130/143 INTERRUPTED."""
    root = repo_root()
    _check(options, root, backend)
    reports = _reports_dir(options, root)
    try:
        backend.prepare(progress)
        if options.scale:
            return _scale_profile(backend, spec, options, reports, progress)
        created = backend.traits.makes_clusters and backend.get(spec.name) is None
        with ownership.keeping() if options.keep_cluster else contextlib.nullcontext():
            tested = identity.identify(backend.create(spec, progress=progress))
        try:
            progress(f"testing {tested.describe()}; reports in {reports}")
            code = _run_suite(_pytest_argv(backend, spec, reports, options, kubeconfig), reports)
        finally:
            if not backend.traits.makes_clusters:
                progress(f"{tested.describe()}: yours, left as it was")
            elif not created:
                progress(f"cluster {spec.name!r} was up before qualify: left running")
            elif options.keep_cluster:
                progress(f"cluster {spec.name!r} kept: `zoneproof down --cluster-name {spec.name}` "
                         "removes it")
            else:
                backend.delete(spec.name, progress=progress)
    except BaseException:
        _drop_if_empty(reports)
        raise
    _drop_if_empty(reports)
    shown = dataclasses.replace(options, html=False) if _interrupted(code) else options
    found, code = _verdict(_report(reports, shown, progress) if reports.is_dir() else None,
                           code)
    progress(f"qualification {found} (exit {code}) for {tested.describe()}; reports: "
             f"{reports if reports.is_dir() else 'none (interrupted before any was written)'}")
    return Qualification(code, reports, found)
