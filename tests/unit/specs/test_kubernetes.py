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
