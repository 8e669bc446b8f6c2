"""One timeline figure per experiment: what the cluster did while the faults were on.

Four stacked panels on the timeline's clock: Ready nodes per zone, the workload's pods by
state, the controller Lease holder, healthy etcd members and API server readiness; every
fault's window is shaded on all of them, counts have integer axes, and the measured
events of the first fault (``marks``: NotReady, first force-delete, Ready elsewhere, lease
hand-over) are drawn as dashed lines labelled with the SLO each one is judged by, its
measured value and bound. Written as PNG and SVG (matplotlib, no display).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the headless backend)
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from zoneproof.faults import FaultRecord  # noqa: E402
from zoneproof.measure import Event  # noqa: E402
from zoneproof.report import marks as measured  # noqa: E402
from zoneproof.slo import SloResult  # noqa: E402

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
    else:  # counts: whole numbers only
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if panel.lines:
            ax.legend(loc="upper right", fontsize=7)
    ax.set_title(panel.title, fontsize=9, loc="left")
    ax.grid(alpha=0.3)


def _draw_marks(axes: Sequence[Axes], drawn: Sequence[Panel],
                found: Sequence[measured.Mark]) -> None:
    """Each mark: a dashed line on every panel, its label in its own panel."""
    index = {panel.title: i for i, panel in enumerate(drawn)}
    stacked: dict[str, int] = {}
    for mark in found:
        for ax in axes:
            ax.axvline(mark.t, color=mark.color, linestyle="--", linewidth=1)
        below = stacked[mark.panel] = stacked.get(mark.panel, -1) + 1  # labels of one panel stack
        axes[index[mark.panel]].annotate(
            mark.label, xy=(mark.t, 1.0), xycoords=("data", "axes fraction"),
            xytext=(3, -4 - 24 * below), textcoords="offset points", fontsize=7,
            color=mark.color, va="top",
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "alpha": 0.8,
                  "edgecolor": mark.color})


def plot_timeline(events: Sequence[Event], faults: Iterable[FaultRecord], stem: Path, *,
                  title: str, slos: Sequence[SloResult] = ()) -> list[Path]:
    """Draw the timeline to ``stem``.png/.svg; the files written. ``slos``: the run's SLO
    results, whose values label the measured events."""
    end = max((e.t for e in events), default=1.0)
    drawn = panels(events)
    faults = list(faults)
    fig, axes = plt.subplots(len(drawn), 1, sharex=True, figsize=(10, 9))
    try:
        for ax, panel in zip(axes, drawn, strict=True):
            _draw(ax, panel, end)
            for fault in faults:
                ax.axvspan(fault.injected_at,
                           fault.reverted_at if fault.reverted_at is not None else end,
                           color="tab:red", alpha=0.15)
        _draw_marks(axes, drawn, measured.marks(events, faults, slos))
        axes[0].text(0.0, 1.25, "shaded: fault injected → reverted; dashed: measured events "
                     "(SLO value ≤ bound)", transform=axes[0].transAxes, fontsize=7,
                     color="tab:red")
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
