"""``chaos discover zoneproof --no-install`` lists every activity with its arguments."""

from __future__ import annotations

import zoneproof
from zoneproof.chaos import actions, probes


def test_discovery_lists_every_exported_activity() -> None:
    discovery = zoneproof.discover(discover_system=False)
    found = {(a["type"], a["name"]) for a in discovery["activities"]}
    assert found == ({("action", n) for n in actions.__all__} |
                     {("probe", n) for n in probes.__all__})
    zone = next(a for a in discovery["activities"] if a["name"] == "zone_outage")
    assert {"name": "zone", "default": "zone-a", "type": "string"} in zone["arguments"]
    kubelets = next(a for a in discovery["activities"] if a["name"] == "stop_kubelets")
    assert [a["name"] for a in kubelets["arguments"]][:5] == [
        "nodes", "count", "zones", "hosting", "max_duration_s"]
