"""Benchmarks: commands that measure figures (medians over several runs), never assert them.

Each module is one ``zoneproof bench NAME``; ``BENCHES`` names them all. Figures are
collected by ``samples``; the command prints min/median/max (``lines``; ``-o json|yaml``).
"""

from collections.abc import Callable
from pathlib import Path

from zoneproof.bench.bed import bench_bed, bench_bed_zones
from zoneproof.bench.chaos import bench_chaos
from zoneproof.bench.controller import bench_controller
from zoneproof.bench.kind import bench_kind
from zoneproof.bench.nodeagent import bench_node_agent
from zoneproof.bench.samples import lines
from zoneproof.bench.scale import bench_bed_ceiling, bench_controller_scale, bench_controller_scale_30
from zoneproof.bench.traffic import bench_traffic_overhead
from zoneproof.bench.webhook import bench_webhook
from zoneproof.cluster.interface import Progress

__all__ = ["BENCHES", "Bench", "lines"]

Bench = Callable[[int, Progress, Path | None], dict[str, dict[str, float]]]
BENCHES: dict[str, Bench] = {"bed": bench_bed, "bed-ceiling": bench_bed_ceiling,
                             "bed-zones": bench_bed_zones,
                             "chaos": bench_chaos, "controller": bench_controller,
                             "controller-scale": bench_controller_scale,
                             "controller-scale-30": bench_controller_scale_30, "kind": bench_kind,
                             "node-agent": bench_node_agent,
                             "traffic-overhead": bench_traffic_overhead, "webhook": bench_webhook}
