"""The webhook's MutatingWebhookConfiguration as the API server stored it, judged against spec §3.

The configuration under test is the vendor's own (``--zp-webhook-registration``) or the
one the harness rendered for the webhook; one test per field (``registration_checks``),
read from the run's shared cluster after the webhook under test was registered there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import allure
import pytest
from kubernetes import client
from zoneproof_fixtures import settings

from zoneproof.conformance.ha_config import registration_checks

pytestmark = pytest.mark.cluster


@pytest.fixture(scope=settings.registration_scope)
def stored_registration(kube_api: client.ApiClient, webhook_under_test: dict[str, Any]) -> dict[str, Any]:
    """The configuration of the webhook under test, read back from the API server."""
    stored = client.AdmissionregistrationV1Api(kube_api).read_mutating_webhook_configuration(
        webhook_under_test["configuration"])
    found: dict[str, Any] = kube_api.sanitize_for_serialization(stored)
    return found


@pytest.mark.parametrize("check", registration_checks.CHECKS, ids=lambda c: c.name)
def test_registration(check: registration_checks.Check, stored_registration: dict[str, Any],
                      record_property: Callable[[str, object], None]) -> None:
    record_property("check", check.name)
    record_property("spec", check.spec)
    allure.dynamic.feature("high-availability-config webhook registration")
    allure.dynamic.story(check.spec)
    allure.attach(json.dumps(stored_registration, indent=2, sort_keys=True),
                  name="stored MutatingWebhookConfiguration",
                  attachment_type=allure.attachment_type.JSON)
    if found := check.judge(stored_registration):
        pytest.fail(f"registration {check.name} ({check.spec}), configuration "
                    f"{stored_registration['metadata']['name']}:\n  " + "\n  ".join(found),
                    pytrace=False)
