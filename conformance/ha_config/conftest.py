"""Fixtures the webhook's conformance modules share: the run's cluster once the webhook under
test is registered there, its Node count, and a poster of AdmissionReviews to the webhook."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from zoneproof_fixtures import settings

from zoneproof.conformance.ha_config import direct, live
from zoneproof.slo.verdict import not_applicable


@pytest.fixture(scope=settings.registration_scope)
def shared_api(kube_api: client.ApiClient, webhook_under_test: dict[str, Any]) -> client.ApiClient:
    """The shared cluster's client, once the webhook under test is registered there."""
    return kube_api


@pytest.fixture(scope=settings.registration_scope)
def shared_node_count(shared_api: client.ApiClient) -> int:
    """Nodes of the shared cluster (the handler only tells 0, 1 and more apart)."""
    return len(live.NodeSet(shared_api).names())


@pytest.fixture(scope=settings.registration_scope)
def shared_poster(webhook_under_test: dict[str, Any]) -> Iterator[direct.Poster]:
    """Posts AdmissionReviews to the shared webhook under test (its URL and CA)."""
    if not webhook_under_test["url"]:
        pytest.skip(not_applicable(
            "the in-cluster webhook is served behind its Service, which only the API server "
            "reaches: review cases post to the webhook directly (run them with "
            "--zp-components host)"))
    poster = direct.Poster(webhook_under_test["url"], webhook_under_test["ca_bundle"].encode())
    yield poster
    poster.close()
