"""The CI recipe in .github/workflows passes actionlint, built from its pinned Go module."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from zoneproof.binaries import PINS, resolve

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
_MODULE = "github.com/rhysd/actionlint"


@pytest.fixture(scope="module")
def actionlint() -> Path:
    """The pinned actionlint (cache, else built); skipped only if the Go proxy cannot serve it."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("needs `go` to build actionlint from its module")
    listed = subprocess.run([go, "list", "-m", "-versions", _MODULE], capture_output=True,
                            text=True, check=False, timeout=120)
    if listed.returncode != 0 or PINS.actionlint not in listed.stdout.split()[1:]:
        pytest.skip(f"the Go module proxy does not serve {_MODULE}@{PINS.actionlint}: "
                    f"{listed.stderr.strip()[:200] or listed.stdout.strip()[:200]}")
    return resolve.resolve("actionlint")


def _lint(actionlint: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(actionlint), "-no-color", *map(str, files)], capture_output=True,
                          text=True, check=False, timeout=120)


def test_the_workflows_pass_actionlint(actionlint: Path) -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {f.name for f in files} >= {"nightly.yml", "release-gate.yml", "qualify.yml"}
    result = _lint(actionlint, *files)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(actionlint: Path, tmp_path: Path) -> None:
    """The check can fail: a workflow calling the reusable one with an unknown input."""
    broken = tmp_path / ".github" / "workflows"
    broken.mkdir(parents=True)
    shutil.copy(WORKFLOWS / "qualify.yml", broken / "qualify.yml")
    (broken / "gate.yml").write_text(
        "on: workflow_dispatch\njobs:\n  gate:\n    uses: ./.github/workflows/qualify.yml\n"
        "    with:\n      no-such-input: x\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = subprocess.run([str(actionlint), "-no-color"], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 1
    assert "no-such-input" in result.stdout
