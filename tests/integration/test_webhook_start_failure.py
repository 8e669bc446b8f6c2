"""A webhook whose start fails leaves nothing behind: not its process, not its registration.

A registration left by a failed start would send every later Deployment of the bed through a
webhook that never came up, so each later test would fail for the wrong reason (seen with a
webhook whose patch the API server refuses)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from zoneproof._util import daemons, kube, waiting
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness import webhook as webhooks
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.kinds import Kind
from zoneproof.specs.ha_config import registration

REFERENCE = f"{sys.executable} -m zoneproof.components.reference.ha_config " \
    "--kubeconfig {kubeconfig} --bind {host} --port {port} --cert-file {cert_file} " \
    "--key-file {key_file}"


def _registration_that_selects_nothing(path: Path) -> Path:
    """The spec's registration, but for namespaces labelled with a value no namespace has:
    the API server never calls the webhook, so ``start`` cannot see it work."""
    body: Any = registration.render_webhook_configuration(
        ca_bundle=b"unused", service=registration.ServiceRef("unused", "unused"), name="unused")
    body["webhooks"][0]["namespaceSelector"] = {"matchLabels": {"zoneproof.dev/never": "x"}}
    path.write_text(yaml.safe_dump(body))
    return path


def test_a_failed_start_unregisters_and_stops_the_webhook(cluster_under_test: Cluster,
                                                          tmp_path: Path) -> None:
    component = Component.from_dict(
        {"kind": "webhook", "source": "command", "command": REFERENCE,
         "registration_file": str(_registration_that_selects_nothing(tmp_path / "mwc.yaml"))},
        Kind.WEBHOOK)
    running = webhooks.RunningWebhook(cluster_under_test, component, tmp_path / "webhook",
                                      configuration_name="zp-start-failure", ready_timeout_s=5)
    with pytest.raises(waiting.WaitTimeout, match="the API server to call"):
        running.start()
    assert running.record is not None, "the webhook process was started"
    assert not daemons.alive(running.record), "the process of a failed start still runs"
    api = kube.api_client(cluster_under_test.kubeconfig)
    try:
        names = [c.metadata.name for c in
                 client.AdmissionregistrationV1Api(api).list_mutating_webhook_configuration().items]
    finally:
        api.close()
    assert "zp-start-failure" not in names, "the registration of a failed start was left behind"
