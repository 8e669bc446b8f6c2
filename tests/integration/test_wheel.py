"""The wheel a stranger installs: built from this checkout, installed into a fresh virtual
environment outside it, run from an empty directory (issue 30 item 1).

Real pip, a real venv, a real qualification on a real local bed (one short experiment, the
webhook's hand conformance cases): the installed ``zoneproof`` finds its suites in the package
(``zoneproof_suites``), not in a checkout, and writes its reports where it is run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = "kubelet-stop-one-node"
_INSTALL_TIMEOUT_S = 1200.0
_QUALIFY_TIMEOUT_S = 3600.0


def _run(argv: list[str], *, cwd: Path, host: Any, timeout_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=host.env(), capture_output=True, text=True,
                          timeout=timeout_s, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, as ``pip wheel .`` builds it."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out),
                           str(ROOT)], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (found,) = out.glob("zoneproof-*.whl")
    return found


def test_installed_wheel_qualifies_from_an_empty_directory(wheel: Path, host: Any,
                                                           tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    zoneproof = env_dir / "bin" / "zoneproof"
    started = time.monotonic()
    installed = _run([str(env_dir / "bin" / "pip"), "install", "--disable-pip-version-check",
                      str(wheel)], cwd=tmp_path, host=host, timeout_s=_INSTALL_TIMEOUT_S)
    install_s = time.monotonic() - started
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "warning" not in (installed.stdout + installed.stderr).lower(), installed.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    version = _run([str(zoneproof), "--version"], cwd=empty, host=host, timeout_s=120)
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("zoneproof 0."), version.stdout

    started = time.monotonic()
    # the webhook's hand cases and one experiment: enough to prove the installed suites run
    # (the whole gate runs in make qualify; here it would add ~10 min to make test)
    qualified = _run([str(zoneproof), "qualify", "--experiments", EXPERIMENT, "--cluster-name", "wheel", "--",
                      "-k", f"{EXPERIMENT} or test_case_on_shared_cluster"],
                     cwd=empty, host=host, timeout_s=_QUALIFY_TIMEOUT_S)
    verdict_s = time.monotonic() - started
    output = qualified.stdout + qualified.stderr
    assert qualified.returncode == 0, output[-6000:]
    assert "checkout" not in output, output[-6000:]

    (reports,) = (empty / "reports").iterdir()
    summary = json.loads((reports / "summary.json").read_text())
    # --only leaves the other experiments out as asked: PARTIAL, exit 0
    assert summary["verdict"] in ("PASS", "PARTIAL"), summary["verdict"]
    assert all(n["asked"] for n in summary["not_judged"]), summary["not_judged"]
    tests = [t["test"] for t in summary["tests"]]
    assert any(t.startswith("conformance/") for t in tests)
    assert f"chaos/test_experiments.py::test_experiment[{EXPERIMENT}]" in tests
    assert (reports / "chaos" / EXPERIMENT / "timeline.png").is_file()
    assert (reports / "report.html").is_file()
    assert not [p for p in empty.iterdir() if p.name != "reports"]

    _second_run_read_back_and_compared(zoneproof, empty, host, reports, summary)
    assert host.wait_clean() == {}
    print(f"\nwheel {wheel.stat().st_size / 1e6:.2f} MB, install {install_s:.0f} s, "
          f"qualify --experiments {EXPERIMENT} to its verdict {verdict_s:.0f} s")


def _second_run_read_back_and_compared(zoneproof: Path, empty: Path, host: Any, reports: Path,
                                       summary: dict[str, Any]) -> None:
    """A second real run, the experiment alone: ``results`` reads it back, ``compare`` sets
    the two side by side (the conformance tests missing from the second run are
    regressions; nothing the second run did is missing from the first)."""
    again = _run([str(zoneproof), "qualify", "--experiments", EXPERIMENT, "--cluster-name", "wheel", "--",
                  "-k", EXPERIMENT], cwd=empty, host=host, timeout_s=_QUALIFY_TIMEOUT_S)
    assert again.returncode == 0, (again.stdout + again.stderr)[-6000:]
    first, second = sorted((empty / "reports").glob("2*"))
    assert first == reports
    shown = _run([str(zoneproof), "results", "-o", "json"], cwd=empty, host=host, timeout_s=120)
    assert shown.returncode == 0, shown.stderr
    newest = json.loads(shown.stdout)
    assert newest["run"] == second.name, newest
    assert newest["slos"] and all(EXPERIMENT in row["test"] for row in newest["slos"]), newest

    slos_of = {row["name"] for row in summary["slos"] if EXPERIMENT in row["test"]}
    forward = _run([str(zoneproof), "compare", second.name, first.name, "-o", "json"],
                   cwd=empty, host=host, timeout_s=120)
    backward = _run([str(zoneproof), "compare", first.name, second.name, "-o", "json"],
                    cwd=empty, host=host, timeout_s=120)
    changed = json.loads(backward.stdout)
    assert backward.returncode == 1, backward.stdout + backward.stderr
    missing = [t["test"] for t in changed["tests"] if t["change"] == "regressed"]
    assert any(t.startswith("conformance/") for t in missing), changed["tests"]
    assert not [t for t in missing if EXPERIMENT in t], changed["tests"]
    in_both = [c for c in changed["slos"] if c["experiment"] == EXPERIMENT]
    assert slos_of and {c["slo"] for c in in_both} == slos_of, changed["slos"]
    assert all(c["a"] is not None and c["b"] is not None for c in in_both), in_both
    assert forward.returncode in (0, 1), forward.stderr
    gained = json.loads(forward.stdout)
    assert not [t for t in gained["tests"] if t["change"] == "regressed"], gained["tests"]
