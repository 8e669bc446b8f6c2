"""Registering the webhook under test again: the update names what it replaces."""

from __future__ import annotations

from zoneproof.components.harness.webhook import replacing


def test_a_replacement_names_the_resource_version_it_replaces() -> None:
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "n", "labels": {"zoneproof.dev/run": "r"}}, "webhooks": [{}]}
    replaced = replacing(body, "4711")
    # without it the API server answers 422 "metadata.resourceVersion: must be specified"
    assert replaced["metadata"] == {"name": "n", "labels": {"zoneproof.dev/run": "r"},
                                    "resourceVersion": "4711"}
    assert replaced["webhooks"] == body["webhooks"]
    assert "resourceVersion" not in body["metadata"], "the body itself is left as it was"
