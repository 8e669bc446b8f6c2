"""The conformance suites, unchanged, against in-cluster components on kind (issue 16 item 3).

Each test runs the suite as a user would, a pytest run with ``--zp-backend kind
--zp-components in-cluster`` and a report directory, on a kind cluster of its own (one
node per zone, to keep it short): a subset of the webhook's cases through the API server
plus its registration checks; the controller's first conformance test (NotReady node:
only matching pods force-deleted; never two actors, from the audit log's pod names). Then
summary.json must name what ran: mode in-cluster, the manifests, the archive's SHA-256 and
the image ids; and nothing of it is left in docker. The refusal on local needs no cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from zoneproof import errors
from zoneproof.binaries.images import build_component_images
from zoneproof.components.harness.component import REFERENCE_MANIFESTS
from zoneproof.components.harness.registry import Kind

ROOT = Path(__file__).resolve().parents[3]
_RUN_TIMEOUT_S = 900.0
WEBHOOK_CASES = "affinity or replicas or registration"
CONTROLLER_FIRST = "conformance/ha_controller/test_controller.py::" \
    "test_not_ready_node_loses_only_matching_pods"


@pytest.fixture(scope="module")
def images(kind_ready: str) -> None:
    """The reference images are built (cached), or the module is skipped saying how."""
    try:
        build_component_images(progress=print)
    except errors.BinaryError as exc:
        if shutil.which("debootstrap") is None or os.geteuid() != 0:
            pytest.skip(f"the component images need building, as root with debootstrap: {exc}")
        raise


def _run(tmp_path: Path, *args: str, nodes_per_zone: int = 1
         ) -> tuple[subprocess.CompletedProcess[str], Path]:
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-p", "no:xdist",
            "-q", "-rs", "--zp-backend=kind", "--zp-components=in-cluster",
            f"--zp-nodes-per-zone={nodes_per_zone}", f"--zp-cluster-name=i16ic-{uuid.uuid4().hex[:6]}",
            f"--zp-report-dir={reports}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=_RUN_TIMEOUT_S)
    print(done.stdout[-4000:], done.stderr[-2000:])
    return done, reports


def _ran(reports: Path, kind: Kind) -> list[dict[str, Any]]:
    summary = json.loads((reports / "summary.json").read_text())
    # -k chose a subset: PARTIAL (the rest named, as asked), never a failure or a gap
    assert summary["verdict"] in ("PASS", "PARTIAL"), summary["failures"]
    assert all(n["asked"] for n in summary["not_judged"]), summary["not_judged"]
    ran: list[dict[str, Any]] = summary["versions"]["components"][str(kind)]["ran"]
    return ran


def _assert_names_what_ran(start: dict[str, Any], kind: Kind) -> None:
    assert start["mode"] == "in-cluster"
    assert start["component"] == {"kind": str(kind), "source": "in-cluster",
                                  "manifests": str(REFERENCE_MANIFESTS[kind])}
    described = start["in_cluster"]
    assert described["manifests"] == str(REFERENCE_MANIFESTS[kind])
    assert len(described["archive_sha256"]) == 64
    ids = {image["name"].rsplit(":", 1)[0]: image["id"] for image in described["images"]}
    assert ids[f"localhost/zoneproof/{REFERENCE_MANIFESTS[kind].name}"].startswith("sha256:")
    assert described["running"] and all(r["image_id"] for r in described["running"])


def _assert_no_cluster_left(reports: Path) -> None:
    names = subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True,
                           text=True, check=True).stdout.split()
    summary = json.loads((reports / "summary.json").read_text())
    made = [c.get("name", "") for c in summary.get("clusters", [])]
    assert made and not [n for n in names for m in made if m and m in n], (made, names)


def test_webhook_conformance_in_cluster(images: None, tmp_path: Path) -> None:
    done, reports = _run(tmp_path, "conformance/ha_config/test_cases.py",
                         "conformance/ha_config/test_registration.py", "-k", WEBHOOK_CASES)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout.splitlines()[-1]
    (start,) = _ran(reports, Kind.WEBHOOK)
    _assert_names_what_ran(start, Kind.WEBHOOK)
    assert start["registration"]["webhooks"][0]["clientConfig"]["service"]["name"] == \
        "ha-config-webhook"
    _assert_no_cluster_left(reports)


def test_controller_first_conformance_test_in_cluster(images: None, tmp_path: Path) -> None:
    # two nodes per zone: the test spares a matching pod on the failed node's zone neighbour
    done, reports = _run(tmp_path, CONTROLLER_FIRST, nodes_per_zone=2)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    (start,) = _ran(reports, Kind.CONTROLLER)
    _assert_names_what_ran(start, Kind.CONTROLLER)
    _assert_no_cluster_left(reports)


def test_in_cluster_components_are_refused_on_local(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "pytest", "conformance/ha_config/test_registration.py",
            "-p", "no:cacheprovider", "-q", "--zp-backend=local", "--zp-components=in-cluster"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "--zp-components in-cluster: the local backend cannot load image archives" in done.stderr
    assert "use --zp-backend kind, or --zp-components host" in done.stderr
