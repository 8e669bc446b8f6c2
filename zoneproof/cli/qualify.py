"""``zoneproof qualify``: build, bring up, run the suite into reports/<run>/, tear down."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

from zoneproof import binaries, errors
from zoneproof.cluster.interface import Backend, Progress
from zoneproof.cluster.spec import ClusterSpec

__all__ = ["SUITES", "qualify", "repo_root"]

#: What qualification runs, relative to the repository root.
SUITES = ("conformance", "chaos", "tests/integration")


def repo_root() -> Path:
    """The zoneproof checkout holding the suites (qualify runs from a checkout)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "conformance").is_dir():
        raise errors.ConfigError(f"no conformance/ next to the zoneproof package ({root}): run "
                                 "qualify from a zoneproof checkout (pip install -e .)")
    return root


def qualify(backend: Backend, spec: ClusterSpec, *, keep_cluster: bool, workers: int,
            pytest_args: list[str], progress: Progress) -> int:
    """Run the qualification; returns pytest's exit code (0 only if everything passed)."""
    root = repo_root()
    run = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    reports = root / "reports" / run
    reports.mkdir(parents=True)
    binaries.resolve_all(progress=progress)
    created = backend.get(spec.name) is None
    backend.create(spec, progress=progress)
    argv = [sys.executable, "-m", "pytest", *SUITES, "-n", str(workers), "--dist", "loadgroup",
            "-m", "not mutants",
            f"--zp-backend={backend.name}", f"--zp-cluster-name={spec.name}",
            f"--junitxml={reports / 'junit.xml'}", f"--alluredir={reports / 'allure-results'}",
            *pytest_args]
    try:
        progress(f"running the suite; reports in {reports}")
        code = subprocess.run(argv, cwd=root, check=False).returncode
    finally:
        if not created:
            progress(f"cluster {spec.name!r} was up before qualify: left running")
        elif keep_cluster:
            progress(f"cluster {spec.name!r} kept: `zoneproof down --name {spec.name}` removes it")
        else:
            backend.delete(spec.name, progress=progress)
    progress(f"qualification {'PASSED' if code == 0 else 'FAILED'} (pytest exit {code}); "
             f"reports: {reports}")
    return code
