"""The outside controller (examples/outside-controller: written from the contract, no zoneproof
code) passes conformance tests it was never tuned against, plugged in by command as a vendor's.

One representative pair, run as a user would (a pytest run of the real suite, its own bed):
the NotReady reaction (C1-C3) and the Lease hand-over on SIGTERM (C6, C7). The whole suite,
20 runs in a row, is ``scripts/conformance-loop.sh 20 --zp-controller-command ...`` (not CI).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("outside-controller")]

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "examples" / "outside-controller" / "outside_controller.py"
COMMAND = (
    f"{{python}} {PROGRAM} --kubeconfig {{kubeconfig}} --identity {{identity}} "
    "--namespaces {namespaces} --selector {selector} --lease-namespace {lease_namespace} "
    "--lease-name {lease_name} --lease-duration {lease_duration} "
    "--renew-deadline {renew_deadline} --retry-period {retry_period}")
TESTS = ("test_not_ready_node_loses_only_matching_pods",
         "test_sigterm_releases_the_lease_to_the_standby")
_RUN_TIMEOUT_S = 600.0


def test_the_outside_controller_passes_conformance_by_command(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "conformance/ha_controller/test_controller.py",
            "-p", "no:cacheprovider", "-q", "-x", "-k", " or ".join(TESTS),
            f"--zp-controller-command={COMMAND}", f"--junitxml={junit}",
            f"--basetemp={tmp_path / 'run'}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=_RUN_TIMEOUT_S)
    output = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, f"the outside controller failed (logs under {tmp_path}):\n{output}"
    text = junit.read_text()
    for name in TESTS:  # both ran (a -k typo would select nothing and exit 5, not 0)
        assert f'name="{name}"' in text, f"{name} did not run:\n{output}"
