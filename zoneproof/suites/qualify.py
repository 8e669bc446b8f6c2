"""``zoneproof qualify``: the release gate — build, up, conformance + chaos, reports, down.

Everything lands in ``reports/<UTC run>/``: junit.xml, allure-results and the allure HTML
report, summary.json (verdict, each SLO's target/measured/pass, versions) and, per chaos
experiment, its chaostoolkit journal, timeline and timeline plots. The exit code is 0
only if every test passed, every SLO held and the reports were written.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoneproof import cluster, errors
from zoneproof.cluster.interface import Backend, Progress
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.components.harness.component import Components
from zoneproof.report import allure_html
from zoneproof.slo import load_slos

__all__ = ["SUITES", "Options", "experiments", "qualify", "repo_root"]

#: What qualification runs, relative to the repository root.
SUITES = ("conformance", "chaos", "tests/integration")


@dataclass(frozen=True, slots=True)
class Options:
    """What ``zoneproof qualify`` was asked for."""

    keep_cluster: bool = False
    workers: int = 2
    slo_file: Path | None = None
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    html: bool = True
    allow_destructive: bool = False
    reports: Path | None = None
    """Parent of the run's report directory (default: reports/ in the checkout)."""
    components: Components = field(default_factory=Components)
    """The webhook and controller under test (passed to pytest as ``--zp-components``)."""
    pytest_args: list[str] = field(default_factory=list)


def repo_root() -> Path:
    """The zoneproof checkout holding the suites (qualify runs from a checkout)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "conformance").is_dir():
        raise errors.ConfigError(f"no conformance/ next to the zoneproof package ({root}): run "
                                 "qualify from a zoneproof checkout (pip install -e .)")
    return root


def experiments(root: Path) -> list[str]:
    """Names of the chaos experiments (chaos/*.yaml stems)."""
    return sorted(p.stem for p in (root / "chaos").glob("*.yaml"))


def _check(options: Options, root: Path) -> None:
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


def _markers(backend: Backend) -> str:
    """Mutation runs never; a backend's own tests (its ``tests_marker``) only when
    qualifying that backend."""
    others = [cluster.backend_type(name).traits.tests_marker for name in cluster.backend_names()
              if name != backend.name]
    return " and ".join(f"not {marker}" for marker in ["mutants", *others] if marker)


def _pytest_argv(backend: Backend, spec: ClusterSpec, reports: Path, options: Options,
                 kubeconfig: Path | None) -> list[str]:
    argv = [sys.executable, "-m", "pytest", *SUITES, "-n", str(options.workers),
            "--dist", "loadgroup", "-m", _markers(backend), "-p", "no:cacheprovider",
            f"--zp-backend={backend.name}", f"--zp-cluster-name={spec.name}",
            f"--zp-report-dir={reports}", f"--junitxml={reports / 'junit.xml'}",
            f"--alluredir={reports / 'allure-results'}",
            f"--zp-components={options.components.to_json()}"]
    if kubeconfig is not None:
        argv.append(f"--zp-kubeconfig={kubeconfig}")
    if options.allow_destructive:
        argv.append("--zp-allow-destructive")
    if options.slo_file is not None:
        argv.append(f"--zp-slo-file={options.slo_file.resolve()}")
    if options.only:
        argv.append(f"--zp-experiments={','.join(options.only)}")
    if options.skip:
        argv.append(f"--zp-skip-experiments={','.join(options.skip)}")
    return [*argv, *options.pytest_args]


def describe(summary: dict[str, Any]) -> list[str]:
    """Lines for the terminal: each SLO, each chaos experiment's wall time, failures."""
    lines = [f"{'SLO':<34}{'experiment':<36}{'target':>9}{'measured':>10}  result"]
    for row in summary.get("slos", []):
        measured = "-" if row["measured"] is None else f"{row['measured']:.2f}"
        experiment = row["test"].rsplit("[", 1)[-1].rstrip("]")
        lines.append(f"{row['name']:<34}{experiment:<36}{row['target']:>9g}{measured:>10}  "
                     f"{'PASS' if row['pass'] else row['status']}")
    walls = [t for t in summary.get("tests", []) if "chaos/" in t["test"]]
    lines += [f"experiment {t['test'].rsplit('[', 1)[-1].rstrip(']')}: {t['outcome']} in "
              f"{t['duration_s']:.1f} s" for t in walls]
    lines += [f"FAILED {f['test']}" for f in summary.get("failures", [])]
    ran = summary.get("versions", {}).get("components", {})
    for kind in ("webhook", "controller"):
        if kind in ran:
            lines += [f"{kind} under test: {_ran(entry)}" for entry in ran[kind]["ran"]] or [
                f"{kind} under test: {ran[kind].get('note', 'never started')}"]
    return lines


def _ran(entry: dict[str, Any]) -> str:
    """One component that ran, for the terminal."""
    what = entry["component"]
    source = {"registered": f"{what.get('name')} variant {what.get('variant')}",
              "command": f"command {what.get('command')!r}", "url": f"at {what.get('url')}"}
    digest = f", {entry['executable']} sha256 {entry['sha256'][:16]}…" if "sha256" in entry else ""
    return f"{source.get(what['source'], what['source'])}{digest} ({entry['starts']} starts)"


def _report(reports: Path, options: Options, progress: Progress) -> bool:
    """Print the summary, render the HTML report; False if a report is missing."""
    summary_path = reports / "summary.json"
    if not summary_path.is_file():
        progress(f"no {summary_path}: the suite did not finish its run")
        return False
    summary = json.loads(summary_path.read_text())
    for line in describe(summary):
        progress(line)
    if not options.html:
        return True
    try:
        index = allure_html.generate(reports / "allure-results", reports / "allure-report",
                                     name=f"zoneproof qualification {reports.name}")
    except (errors.ZoneproofError, OSError) as exc:
        progress(f"allure HTML report failed: {exc}")
        return False
    progress(f"allure HTML report: {index}")
    return True


def qualify(backend: Backend, spec: ClusterSpec, options: Options, *, kubeconfig: Path | None,
            progress: Progress) -> int:
    """Run the qualification; 0 only if everything passed and the reports were written."""
    root = repo_root()
    _check(options, root)
    run = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    reports = (options.reports or root / "reports") / run
    reports.mkdir(parents=True)
    backend.prepare(progress)
    # an adopted cluster (existing backend) is never deleted: its delete removes what the
    # run installed there (the node agent)
    created = not backend.traits.makes_clusters or backend.get(spec.name) is None
    backend.create(spec, progress=progress)
    try:
        progress(f"running the suite; reports in {reports}")
        code = subprocess.run(_pytest_argv(backend, spec, reports, options, kubeconfig),
                              cwd=root, check=False).returncode
    finally:
        if not created:
            progress(f"cluster {spec.name!r} was up before qualify: left running")
        elif options.keep_cluster:
            progress(f"cluster {spec.name!r} kept: `zoneproof down --name {spec.name}` removes it")
        else:
            backend.delete(spec.name, progress=progress)
    reported = _report(reports, options, progress)
    if code == 0 and not reported:
        code = 1
    progress(f"qualification {'PASSED' if code == 0 else 'FAILED'} (exit {code}); "
             f"reports: {reports}")
    return code
