"""A broken webhook plugged in by command is the one the chaos experiments run, and the one
summary.json names (issue 13: a report says only what happened); a vendor's own
MutatingWebhookConfiguration is the one registered and judged (issue 15).

The "vendor" webhook is the reference module started as its ``wrong-zone-key`` variant,
given as a plain command template (``--zp-webhook-command``, not ``--zp-webhook-variant``):
its zone spread uses the wrong topology key, so zone-outage's zone-tolerant workload gets
none and the experiment must fail at ``deploy-zone-tolerant-workload``. Had the experiment
started the reference webhook instead, it would pass. The suite runs as a user would: a
pytest run of the real experiment on its own bed, with a report directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from zoneproof_fixtures.settings import Settings

from zoneproof import binaries
from zoneproof.conformance.ha_config import registration_checks
from zoneproof.runs.sweep import RUN_LABEL
from zoneproof.specs.ha_config import registration

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("vendor-webhook")]

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = "chaos/test_experiments.py::test_experiment[zone-outage]"
BROKEN_BY_COMMAND = (
    "{python} -m zoneproof.components.reference.ha_config --kubeconfig {kubeconfig} --bind {host} "
    "--port {port} --cert-file {cert_file} --key-file {key_file} --variant wrong-zone-key")
_RUN_TIMEOUT_S = 1200.0


def _failed_activity(journal: dict[str, Any], name: str) -> dict[str, Any]:
    runs = [r for r in journal["run"] if r["activity"]["name"] == name]
    assert runs, f"the journal has no activity {name}"
    return runs[0]


def test_a_broken_webhook_by_command_fails_zone_outage_and_is_named(
        zp_settings: Settings, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    backend = "kind" if zp_settings.backend == "kind" else "local"
    argv = [sys.executable, "-m", "pytest", EXPERIMENT, "-p", "no:cacheprovider", "-q",
            f"--zp-backend={backend}", f"--zp-webhook-command={BROKEN_BY_COMMAND}",
            f"--zp-report-dir={reports}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=_RUN_TIMEOUT_S)
    output = done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, output

    summary = json.loads((reports / "summary.json").read_text())
    assert summary["verdict"] == "FAIL"
    (failure,) = summary["failures"]
    assert failure["test"] == EXPERIMENT
    journal = json.loads((reports / "chaos" / "zone-outage" / "journal.json").read_text())
    deploy = _failed_activity(journal, "deploy-zone-tolerant-workload")
    assert deploy["status"] == "failed", "the experiment must fail where the webhook matters"
    assert "no zone topology spread constraint" in "".join(deploy["exception"])

    ran = summary["versions"]["components"]
    (webhook,) = ran["webhook"]["ran"]
    executable = Path(sys.executable).resolve()
    assert webhook["component"] == {"kind": "webhook", "source": "command",
                                    "command": BROKEN_BY_COMMAND}
    assert webhook["command"] == BROKEN_BY_COMMAND
    assert webhook["argv"][-2:] == ["--variant", "wrong-zone-key"]
    assert webhook["executable"] == str(executable)
    assert webhook["sha256"] == binaries.sha256_of(executable)
    assert webhook["tests"] == [EXPERIMENT] and webhook["starts"] == 1
    assert registration_checks.judge(webhook["registration"]) == {}, \
        "a command webhook gets the spec's registration, as the API server stored it"
    (controller,) = ran["controller"]["ran"]
    assert controller["component"] == {"kind": "controller", "source": "registered",
                                       "name": "reference", "variant": "reference"}


REFERENCE_BY_COMMAND = BROKEN_BY_COMMAND.replace(" --variant wrong-zone-key", "")


def test_a_vendor_registration_file_is_registered_and_judged(zp_settings: Settings,
                                                               tmp_path: Path) -> None:
    """The vendor's file with one wrong field (timeoutSeconds 30) and a Service reference:
    the suite registers it under its own name at the URL where it serves the webhook, the
    cases run through it, and exactly the timeoutSeconds check fails."""
    vendor: Any = registration.render_webhook_configuration(
        ca_bundle=b"vendor-ca", service=registration.ServiceRef("acme", "acme-system"),
        name="acme-hac")
    vendor["webhooks"][0]["timeoutSeconds"] = 30
    vendor["metadata"]["labels"] = {"vendor": "acme"}
    path = tmp_path / "acme-mwc.yaml"
    path.write_text(yaml.safe_dump(vendor))
    reports = tmp_path / "reports"
    backend = "kind" if zp_settings.backend == "kind" else "local"
    argv = [sys.executable, "-m", "pytest", "conformance/ha_config/test_registration.py",
            "conformance/ha_config/test_cases.py", "-k",
            "registration or e01-seed or review-namespace-without-consider",
            "-p", "no:cacheprovider", "-q", f"--zp-backend={backend}",
            f"--zp-cluster-name=zp-mwc-{uuid.uuid4().hex[:6]}",
            f"--zp-webhook-command={REFERENCE_BY_COMMAND}", f"--zp-webhook-registration={path}",
            f"--zp-report-dir={reports}", f"--junitxml={tmp_path / 'junit.xml'}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=_RUN_TIMEOUT_S)
    output = done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, output
    summary = json.loads((reports / "summary.json").read_text())
    assert [f["test"] for f in summary["failures"]] == [
        "conformance/ha_config/test_registration.py::test_registration[timeoutSeconds]"], output
    assert summary["counts"] == {"passed": 10, "failed": 1}, output
    (webhook,) = summary["versions"]["components"]["webhook"]["ran"]
    assert webhook["component"]["registration_file"] == str(path)
    stored = webhook["registration"]
    assert stored["metadata"]["name"] == registration.DEFAULT_CONFIGURATION_NAME
    labels = stored["metadata"]["labels"]
    assert labels["vendor"] == "acme", "the vendor's own labels are registered as written"
    assert set(labels) == {"vendor", RUN_LABEL}, "plus only the run's label (swept at its end)"
    client = stored["webhooks"][0]["clientConfig"]
    assert "service" not in client and client["url"] == webhook["url"]
    assert client["url"].endswith(registration.webhook_url("h", 1).split(":1", 1)[1])
    assert stored["webhooks"][0]["timeoutSeconds"] == 30, "the vendor's fields are judged as given"
    logs = list((reports / "components").glob("*/webhook.log"))
    assert len(logs) == 1 and '"admission"' in logs[0].read_text(), "its log is kept"
