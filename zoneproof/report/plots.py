"""One timeline figure per experiment: what the cluster did while the faults were on.

Four stacked panels on the timeline's clock: Ready nodes per zone, the workload's pods by
state, the controller Lease holder, healthy etcd members and API server readiness; every
fault's window is shaded on all of them. Written as PNG and SVG (matplotlib, no display).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the headless backend)
from matplotlib.axes import Axes  # noqa: E402

from zoneproof.faults import FaultRecord  # noqa: E402
from zoneproof.measure import Event  # noqa: E402

__all__ = ["FORMATS", "Panel", "Series", "panels", "plot_timeline"]

FORMATS = ("png", "svg")
Series = dict[str, list[tuple[float, float]]]
"""Label → step points (t, value), each value holding until the next point."""


@dataclass(frozen=True, slots=True)
class Panel:
    """One panel: its title, lines, and tick labels when the values are categories."""

    title: str
    lines: Series
    categories: tuple[str, ...] = ()


def _step(points: dict[str, list[tuple[float, float]]], label: str, t: float, value: float) -> None:
    line = points.setdefault(label, [])
    if not line or line[-1][1] != value:
        line.append((t, value))


def _ready_nodes_per_zone(events: Sequence[Event]) -> Series:
    ready: dict[str, bool] = {}
    zones: dict[str, str] = {}
    out: Series = {}
    for e in events:
        if e.kind != "node_ready":
            continue
        zones[e.subject] = e.detail.get("zone", "") or "no zone"
        ready[e.subject] = e.detail.get("status") == "True"
        zone = zones[e.subject]
        _step(out, zone, e.t, sum(ready[n] for n, z in zones.items() if z == zone))
    return out


_POD_STATES = {"pod_scheduled": "scheduled", "pod_ready": "ready", "pod_deleting": "terminating",
               "pod_deleted": "gone"}


def _pods_by_state(events: Sequence[Event]) -> Series:
    state: dict[str, str] = {}
    out: Series = {}
    for e in events:
        if e.kind not in _POD_STATES:
            continue
        state[e.detail.get("uid", e.subject)] = _POD_STATES[e.kind]
        for label in ("scheduled", "ready", "terminating"):
            _step(out, label, e.t, sum(1 for s in state.values() if s == label))
    return out


def _lease_holder(events: Sequence[Event]) -> Panel:
    out: Series = {}
    holders: list[str] = []
    for e in events:
        if e.kind == "lease_holder":
            holder = e.detail.get("holder", "") or "(none)"
            if holder not in holders:
                holders.append(holder)
            _step(out, "holder", e.t, float(holders.index(holder)))
    return Panel("controller Lease holder", out, tuple(holders))


def _control_plane(events: Sequence[Event]) -> Series:
    healthy: dict[str, bool] = {}
    out: Series = {}
    for e in events:
        if e.kind == "etcd_member":
            healthy[e.subject] = e.detail.get("healthy") == "True"
            _step(out, "etcd members healthy", e.t, float(sum(healthy.values())))
        elif e.kind == "apiserver_ready":
            _step(out, "API server ready", e.t, 1.0 if e.detail.get("ready") == "True" else 0.0)
    return out


def panels(events: Sequence[Event]) -> list[Panel]:
    """What the figure draws, top to bottom (pure)."""
    return [Panel("Ready nodes per zone", _ready_nodes_per_zone(events)),
            Panel("workload pods", _pods_by_state(events)),
            _lease_holder(events),
            Panel("control plane", _control_plane(events))]


def _draw(ax: Axes, panel: Panel, end: float) -> None:
    for label, points in panel.lines.items():
        xs = [t for t, _ in points] + [end]
        ys = [v for _, v in points] + [points[-1][1]]
        ax.step(xs, ys, where="post", label=label)
    if panel.categories:
        ax.set_yticks(range(len(panel.categories)), panel.categories, fontsize=7)
    elif panel.lines:
        ax.legend(loc="upper right", fontsize=7)
    ax.set_title(panel.title, fontsize=9, loc="left")
    ax.grid(alpha=0.3)


def plot_timeline(events: Sequence[Event], faults: Iterable[FaultRecord], stem: Path, *,
                  title: str) -> list[Path]:
    """Draw the timeline to ``stem``.png/.svg; the files written."""
    end = max((e.t for e in events), default=1.0)
    drawn = panels(events)
    fig, axes = plt.subplots(len(drawn), 1, sharex=True, figsize=(10, 9))
    try:
        for ax, panel in zip(axes, drawn, strict=True):
            _draw(ax, panel, end)
            for fault in faults:
                ax.axvspan(fault.injected_at,
                           fault.reverted_at if fault.reverted_at is not None else end,
                           color="tab:red", alpha=0.15)
        axes[0].text(0.0, 1.25, "shaded: fault injected → reverted", transform=axes[0].transAxes,
                     fontsize=7, color="tab:red")
        axes[-1].set_xlabel("seconds since the experiment started")
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        stem.parent.mkdir(parents=True, exist_ok=True)
        written = [stem.with_suffix(f".{fmt}") for fmt in FORMATS]
        for path in written:
            fig.savefig(path, dpi=90)
        return written
    finally:
        plt.close(fig)
