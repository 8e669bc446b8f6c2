"""``zoneproof bench chaos``: every experiment's SLO figures and wall time over several runs.

Each run is one pytest session of the chaos experiments (reference components) with
``--zp-report-dir``; the figures come from its summary.json, so they are exactly what
qualification reports. A run whose suite fails still counts its measured figures; the
failures are printed.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

from zoneproof import errors
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.report import summary
from zoneproof.suites import qualify

__all__ = ["bench_chaos", "samples_of"]


def samples_of(run: summary.Summary) -> dict[str, list[float]]:
    """``<experiment> <slo>`` → measured, and ``<experiment> wall s`` → duration, of one run."""
    out: dict[str, list[float]] = {}
    for test, result in run.slos:
        if result.observed is not None:
            out.setdefault(f"{qualify.experiment_of(test)} {result.name}", []).append(
                result.observed)
    for outcome in run.outcomes:
        if "test_experiment[" in outcome.nodeid:
            out.setdefault(f"{qualify.experiment_of(outcome.nodeid)} wall s", []).append(
                outcome.duration_s)
    return out


def bench_chaos(runs: int, progress: Progress, out: Path | None) -> figures.Summary:
    """Run the experiments ``runs`` times; median/min/max of each figure."""
    root = qualify.repo_root()
    base = root / "reports" / f"bench-chaos-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}"
    samples: dict[str, list[float]] = {}
    for i in range(runs):
        reports = base / f"run-{i + 1}"
        argv = [sys.executable, "-m", "pytest", "chaos", "-q", "-p", "no:cacheprovider",
                "-k", "test_experiment and not catches", f"--zp-report-dir={reports}"]
        code = subprocess.run(argv, cwd=root, check=False, capture_output=True).returncode
        path = reports / "summary.json"
        if not path.is_file():
            raise errors.ZoneproofError(f"chaos run {i + 1} wrote no {path} (pytest exit {code})")
        run = summary.load(path)
        for key, values in samples_of(run).items():
            samples.setdefault(key, []).extend(values)
        failed = [o.nodeid for o in run.failures]
        progress(f"run {i + 1}/{runs}: {run.verdict} in {run.duration_s:.0f} s"
                 + (f"; failed: {', '.join(failed)}" if failed else ""))
    return figures.summarize(samples, progress, out)
