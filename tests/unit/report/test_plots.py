"""The timeline figure: what each panel draws (pure), and that both files are written."""

from __future__ import annotations

from pathlib import Path

from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import Timeline
from zoneproof.report import plots


def _timeline() -> Timeline:
    times = iter([0.0, 1.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0, 14.0])
    t = Timeline(clock=lambda: next(times))
    t.add("node_ready", "a1", status="True", zone="zone-a")
    t.add("node_ready", "b1", status="True", zone="zone-b")
    t.add("lease_holder", "ns/l", holder="r0")
    t.add("pod_ready", "ns/db-0", uid="u0")
    t.add("node_ready", "a1", status="Unknown", zone="zone-a")
    t.add("pod_deleting", "ns/db-0", uid="u0")
    t.add("lease_holder", "ns/l", holder="r1")
    t.add("etcd_member", "m0", healthy="False")
    t.add("apiserver_ready", "kube-apiserver", ready="True")
    return t


def test_panels_step_series() -> None:
    by_title = {p.title: p for p in plots.panels(_timeline().events)}
    assert by_title["Ready nodes per zone"].lines == {"zone-a": [(1.0, 1.0), (10.0, 0.0)],
                                                      "zone-b": [(1.0, 1.0)]}
    pods = by_title["workload pods"].lines
    assert pods["ready"] == [(3.0, 1.0), (11.0, 0.0)] and pods["terminating"][-1] == (11.0, 1.0)
    lease = by_title["controller Lease holder"]
    assert lease.categories == ("r0", "r1") and lease.lines["holder"] == [(2.0, 0.0), (12.0, 1.0)]
    assert by_title["control plane"].lines["etcd members healthy"] == [(13.0, 0.0)]


def test_plot_writes_png_and_svg(tmp_path: Path) -> None:
    fault = FaultRecord("zone-outage", (Effect.NODES_NOT_READY,), ("a1",), injected_at=5.0,
                        reverted_at=None)
    written = plots.plot_timeline(_timeline().events, [fault], tmp_path / "x" / "timeline",
                                  title="zone outage")
    assert [p.name for p in written] == ["timeline.png", "timeline.svg"]
    assert written[0].read_bytes()[:4] == b"\x89PNG"
    assert "zone outage" in written[1].read_text()
