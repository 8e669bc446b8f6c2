"""Benchmark figures: samples → median/min/max, printed (text, JSON or YAML) and optionally
saved with their samples as JSON."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, TypeVar

from zoneproof.cluster.interface import Cluster, Progress
from zoneproof.cluster.spec import ClusterSpec

__all__ = ["Samples", "Summary", "artefacts_dir", "cpu_seconds", "lines", "percentile",
           "summarize", "timed_bed"]

Summary = dict[str, dict[str, float]]


class Samples(dict[str, list[float]]):
    """Figure name → every value measured for it."""

    def note(self, key: str, value: float) -> None:
        """Add one measured ``value`` of figure ``key``."""
        self.setdefault(key, []).append(value)

    def last_run(self) -> str:
        """The latest value of each figure, for a progress line."""
        return ", ".join(f"{k}={v[-1]:.2f}" for k, v in self.items())


C_co = TypeVar("C_co", bound=Cluster, covariant=True)


class _MakesBeds(Protocol[C_co]):
    def create(self, spec: ClusterSpec, *, progress: Progress) -> C_co: ...
    def delete(self, name: str, *, progress: Progress) -> bool: ...


@contextlib.contextmanager
def timed_bed(backend: _MakesBeds[C_co], spec: ClusterSpec, samples: Samples,
              progress: Progress) -> Iterator[C_co]:
    """A fresh bed of ``backend``, deleted after the block; ``up_seconds`` and
    ``down_seconds`` noted."""
    start = time.monotonic()
    bed = backend.create(spec, progress=progress)
    samples.note("up_seconds", time.monotonic() - start)
    try:
        yield bed
    finally:
        start = time.monotonic()
        backend.delete(spec.name, progress=lambda _: None)
        samples.note("down_seconds", time.monotonic() - start)


def summarize(samples: dict[str, list[float]], progress: Progress, out: Path | None = None, *,
              notes: dict[str, str] | None = None) -> Summary:
    """Median, min and max of each figure and its number of samples (``n``), which the
    command prints (``lines``, or ``-o json|yaml``); JSON to ``out`` (with ``notes``: how the
    figures were measured, e.g. the load generator)."""
    summary = {k: {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}
               for k, v in samples.items()}
    if out is not None:
        saved: dict[str, object] = {"figures": summary, "samples": samples}
        if notes:
            saved["notes"] = notes
        out.write_text(json.dumps(saved, indent=2))
        progress(f"figures and samples written to {out}")
    return summary


def lines(summary: Summary) -> Iterator[str]:
    """The figures as text, one line each (``zoneproof bench``'s default output)."""
    for key, stats in summary.items():
        yield (f"{key:36} median {stats['median']:9.3f}  (min {stats['min']:.3f}, "
               f"max {stats['max']:.3f}, n={stats['n']:.0f})")


@contextlib.contextmanager
def artefacts_dir(out: Path | None, bench: str, progress: Progress) -> Iterator[Path]:
    """Where a bench writes its runs' logs: kept beside ``out`` (``<out>.artefacts/``) when
    figures are saved, else a temporary directory removed at the end (nothing left in /tmp).
    """
    if out is not None:
        kept = out.with_name(out.name + ".artefacts")
        kept.mkdir(parents=True, exist_ok=True)
        yield kept
        progress(f"{bench}: logs kept for analysis in {kept}")
        return
    with tempfile.TemporaryDirectory(prefix=f"zp-bench-{bench}-") as scratch:
        yield Path(scratch)


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of ``values``; ValueError when empty."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
