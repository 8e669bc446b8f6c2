"""The wheel a stranger installs: built from this checkout, installed into a fresh virtual
environment outside it, run from an empty directory (issue 30 item 1).

Real pip, a real venv, a real qualification on a real local bed (one short experiment, the
conformance suites in full): the installed ``zoneproof`` finds its suites in the package
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
    qualified = _run([str(zoneproof), "qualify", "--only", EXPERIMENT, "--name", "wheel"],
                     cwd=empty, host=host, timeout_s=_QUALIFY_TIMEOUT_S)
    verdict_s = time.monotonic() - started
    output = qualified.stdout + qualified.stderr
    assert qualified.returncode == 0, output[-6000:]
    assert "checkout" not in output, output[-6000:]

    (reports,) = (empty / "reports").iterdir()
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["verdict"] == "PASS"
    tests = [t["test"] for t in summary["tests"]]
    assert any(t.startswith("conformance/") for t in tests)
    assert f"chaos/test_experiments.py::test_experiment[{EXPERIMENT}]" in tests
    assert (reports / "chaos" / EXPERIMENT / "timeline.png").is_file()
    assert (reports / "report.html").is_file()
    assert not [p for p in empty.iterdir() if p.name != "reports"]
    assert host.wait_clean() == {}
    print(f"\nwheel {wheel.stat().st_size / 1e6:.2f} MB, install {install_s:.0f} s, "
          f"qualify --only {EXPERIMENT} to its verdict {verdict_s:.0f} s")
