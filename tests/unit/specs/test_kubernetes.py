"""Well-known keys and label selectors read as labels."""

from __future__ import annotations

import pytest

from zoneproof import errors
from zoneproof.specs import kubernetes
from zoneproof.specs.ha_config import keys


def test_workload_labels_need_an_equality_selector() -> None:
    assert kubernetes.matching_labels("app=noobaa, tier==db") == {"app": "noobaa", "tier": "db"}
    for bad in ("app in (x)", "", "!app"):
        with pytest.raises(errors.ConfigError, match="equality-based"):
            kubernetes.matching_labels(bad)


def test_one_zone_label() -> None:
    assert keys.TOPOLOGY_ZONE is kubernetes.ZONE_LABEL
    assert kubernetes.zone_selector("zone-a") == "topology.kubernetes.io/zone=zone-a"


def test_workload_labels_are_valid_labels() -> None:
    assert kubernetes.matching_labels("example.com/app=x_1, tier=") == {"example.com/app": "x_1",
                                                                       "tier": ""}
    for bad in ("app=a=b", "-app=x", "app=x-", "Bad.Prefix/app=x", f"app={'x' * 64}"):
        with pytest.raises(errors.ConfigError, match="is not a valid label"):
            kubernetes.matching_labels(bad)


def test_dns_names() -> None:
    assert kubernetes.is_dns_label("zoneproof-system") and not kubernetes.is_dns_label("a.b")
    assert kubernetes.is_dns_subdomain("a.b-c") and not kubernetes.is_dns_subdomain("A")
