"""``chaos discover zoneproof --no-install`` lists every activity with its arguments and
every fault kind ``inject_fault`` takes."""

from __future__ import annotations

import zoneproof
from zoneproof.chaos import actions, probes
from zoneproof.faults import registry


def test_discovery_lists_every_exported_activity_and_fault_kind() -> None:
    discovery = zoneproof.discover(discover_system=False)
    found = {(a["type"], a["name"]) for a in discovery["activities"]}
    assert found == ({("action", n) for n in actions.__all__} |
                     {("probe", n) for n in probes.__all__})
    inject = next(a for a in discovery["activities"] if a["name"] == "inject_fault")
    assert [a["name"] for a in inject["arguments"]][:3] == ["fault", "parameters",
                                                            "max_duration_s"]
    kinds = {k["name"]: k for k in discovery["faults"]}
    assert set(kinds) == set(registry.kinds())
    assert {"name": "zone", "default": "zone-a"} in kinds["zone-outage"]["parameters"]
    assert [p["name"] for p in kinds["stop-kubelets"]["parameters"]] == [
        "nodes", "count", "zones", "hosting"]
    assert kinds["drain-zone"]["effects"] == ["nodes-cordoned", "nodes-drained"]
    assert "destructive" in kinds["zone-outage"]["requires"]
