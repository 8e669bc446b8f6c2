"""The measured events a timeline figure marks, each with the SLO judged on it (pure).

For the first fault that hit targets (nodes, a zone's nodes, the leader): when a target
turned NotReady, when the first pod of a target was deleted, when a pod was first Ready on
a node not hit, and when the Lease passed to another holder. Found on the same saved
timeline the SLO figures come from; a mark's label carries the SLO result of its name
(measured value and bound), so the figure shows what the verdict was about.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from zoneproof.faults import FaultRecord
from zoneproof.measure import Event
from zoneproof.slo import SloResult

__all__ = ["KINDS", "Mark", "marks"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class MarkKind:
    """One kind of measured event: the panel it belongs to, the SLO judged on it, a colour."""

    what: str
    panel: str
    slo: str
    color: str


KINDS = (MarkKind("NotReady", "Ready nodes per zone", "node-not-ready-detection", "tab:orange"),
         MarkKind("first force-delete", "workload pods", "ha-controller-force-delete",
                  "tab:purple"),
         MarkKind("Ready elsewhere", "workload pods", "statefulset-pod-ready-elsewhere",
                  "tab:green"),
         MarkKind("lease hand-over", "controller Lease holder", "lease-failover", "tab:blue"))


@dataclass(frozen=True, slots=True)
class Mark:
    """A measured event at ``t`` (timeline seconds), labelled for the figure."""

    kind: MarkKind
    t: float
    label: str

    @property
    def panel(self) -> str:
        """Title of the panel the label goes in."""
        return self.kind.panel

    @property
    def color(self) -> str:
        """The line and label colour."""
        return self.kind.color


def _first(items: Iterable[_T]) -> _T | None:
    return next(iter(items), None)


def _found(events: Sequence[Event], fault: FaultRecord) -> dict[str, Event | None]:
    after = [e for e in events if e.t >= fault.injected_at]
    targets = set(fault.targets)
    on_target = {e.subject for e in events
                 if e.kind == "pod_scheduled" and e.detail.get("node") in targets}
    holders = [e for e in events if e.kind == "lease_holder" and e.t <= fault.injected_at]
    old = holders[-1].detail.get("holder", "") if holders else ""
    return {
        "NotReady": _first(e for e in after if e.kind == "node_ready" and e.subject in targets
                           and e.detail.get("status") != "True"),
        "first force-delete": _first(e for e in after if e.kind == "pod_deleted"
                                     and e.subject in on_target),
        "Ready elsewhere": _first(e for e in after if e.kind == "pod_ready"
                                  and e.detail.get("node", "") not in targets),
        "lease hand-over": _first(e for e in after if e.kind == "lease_holder"
                                  and e.detail.get("holder") not in ("", old)),
    }


def _slo_text(result: SloResult | None) -> str:
    if result is None:
        return ""
    if result.observed is None:
        return f"\nSLO {result.name}: no data ({result.status})"
    relation = "≤" if result.met else ">"
    return (f"\nSLO {result.name}: {result.observed:.1f} {result.unit} {relation} "
            f"{result.threshold:g} ({result.status})")


def marks(events: Sequence[Event], faults: Sequence[FaultRecord],
          slos: Sequence[SloResult] = ()) -> list[Mark]:
    """The measured events of the first fault with targets, in time order."""
    fault = _first(f for f in faults if f.targets)
    if fault is None:
        return []
    found = _found(events, fault)
    results = {r.name: r for r in slos}
    out = [Mark(kind, event.t, f"{kind.what} +{event.t - fault.injected_at:.1f} s"
                f"{_slo_text(results.get(kind.slo))}")
           for kind in KINDS if (event := found[kind.what]) is not None]
    return sorted(out, key=lambda m: m.t)
