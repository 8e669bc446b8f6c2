"""``zoneproof bench traffic-overhead``: what the recorded register traffic costs the recovery
figures it runs beside.

Each experiment is run in pairs on one local bed by chaostoolkit's own runner (``chaos
run``): once as shipped (history traffic on, ~150 ops/s) and once with its two traffic
actions and the ``history-linearizable`` SLO removed, alternating so that load and bed age
hit both alike. Figures: the median of every other SLO figure with and without traffic,
and their ratio (with / without); of the runs with traffic, the history's size, rate and
checking time.
"""

from __future__ import annotations

import copy
import json
import statistics
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from zoneproof import errors
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.local import LocalBackend
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.report import journal as journals
from zoneproof.suites import qualify

__all__ = ["EXPERIMENTS", "TRAFFIC_ACTIONS", "bench_traffic_overhead", "without_history_traffic"]

EXPERIMENTS = ("etcd-kill-leader", "zone-outage")
TRAFFIC_ACTIONS = frozenset({"start-history-traffic", "stop-history-traffic"})
_HISTORY_SLO = "history-linearizable"
#: Figures of the recorded history (the run with traffic): name here → the journal's key.
_HISTORY_FIGURES = {"history operations": "operations", "history ops/s": "ops_per_s",
                    "history check s": "check_seconds",
                    "history non-linearizable keys": "non_linearizable_keys"}


def without_history_traffic(experiment: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``experiment`` with no history traffic: its start/stop actions (method and
    rollbacks) and the ``history-linearizable`` SLO removed. ValueError if it has none."""
    changed = copy.deepcopy(dict(experiment))
    names = {a.get("name") for part in ("method", "rollbacks") for a in changed.get(part, [])}
    if not TRAFFIC_ACTIONS.issubset(names):
        raise ValueError(f"{changed.get('title', 'experiment')!r} runs no history traffic "
                         f"(no {sorted(TRAFFIC_ACTIONS)} actions)")
    for part in ("method", "rollbacks"):
        if part in changed:
            changed[part] = [a for a in changed[part] if a.get("name") not in TRAFFIC_ACTIONS]
    conf = changed.setdefault("configuration", {})
    conf["zoneproof_slos"] = [s for s in conf.get("zoneproof_slos", []) if s != _HISTORY_SLO]
    return changed


def _run(experiment: Path, cluster: str, workdir: Path) -> dict[str, float]:
    """One ``chaos run`` of ``experiment`` on bed ``cluster``: its measured SLO figures and
    wall time. ZoneproofError if the run recorded no SLOs (it did not get that far)."""
    workdir.mkdir(parents=True)
    journal = workdir / "journal.json"
    argv = [str(Path(sys.executable).with_name("chaos")), "--log-file", str(workdir / "chaos.log"),
            "run", "--rollback-strategy", "always", "--journal-path", str(journal),
            "--var", f"zoneproof_cluster={cluster}", "--var", f"zoneproof_workdir={workdir}",
            str(experiment)]
    subprocess.run(argv, check=False, capture_output=True)
    if not journal.is_file():
        raise errors.ZoneproofError(f"chaos run of {experiment} wrote no journal: see "
                                    f"{workdir / 'chaos.log'}")
    recorded = json.loads(journal.read_text())
    results = journals.slo_results(recorded)
    if not results:
        raise errors.ZoneproofError(f"chaos run of {experiment} judged no SLO: see "
                                    f"{workdir / 'chaos.log'}")
    found = {r.name: r.observed for r in results if r.observed is not None and
             r.name != _HISTORY_SLO}
    found["wall s"] = float(recorded.get("duration", 0.0))
    history = journals.history_record(recorded) or {}
    for figure, key in _HISTORY_FIGURES.items():
        if history.get(key) is not None:
            found[figure] = float(history[key])
    return found


def _ratios(samples: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    """``<experiment> <figure> with/without`` for every figure measured both ways: the ratio
    of the medians ``summarize`` prints (not nearest-rank ones, which differ for even counts)."""
    out: dict[str, list[float]] = {}
    for key, with_values in samples.items():
        if not key.endswith(" with"):
            continue
        without = samples.get(key.removesuffix(" with") + " without")
        base = statistics.median(without) if without else 0.0
        if base > 0:
            out[key.removesuffix(" with") + " with/without"] = [
                statistics.median(with_values) / base]
    return out


def bench_traffic_overhead(runs: int, progress: Progress, out: Path | None = None,
                           experiments: Sequence[str] = EXPERIMENTS) -> figures.Summary:
    """``runs`` pairs (with, without traffic) of each experiment on one local bed."""
    chaos_dir = qualify.repo_root() / "chaos"
    backend = LocalBackend()
    name = f"zp-bench-traffic-{uuid.uuid4().hex[:6]}"
    samples = figures.Samples()
    with figures.artefacts_dir(out, "traffic-overhead", progress) as kept:
        plain = {}
        for exp in experiments:
            shipped = yaml.safe_load((chaos_dir / f"{exp}.yaml").read_text())
            plain[exp] = kept / f"{exp}-no-traffic.yaml"
            plain[exp].write_text(yaml.safe_dump(without_history_traffic(shipped)))
        backend.create(ClusterSpec(name=name), progress=lambda _: None)
        try:
            for run in range(1, runs + 1):
                for exp in experiments:
                    for mode, path in (("with", chaos_dir / f"{exp}.yaml"),
                                       ("without", plain[exp])):
                        found = _run(path, name, kept / f"run-{run}" / f"{exp}-{mode}")
                        for figure, value in found.items():
                            samples.note(f"{exp} {figure} {mode}", value)
                        progress(f"run {run}/{runs} {exp} {mode} traffic: " + ", ".join(
                            f"{k}={v:.2f}" for k, v in found.items()))
        finally:
            backend.delete(name, progress=lambda _: None)
    samples.update(_ratios(samples))
    return figures.summarize(samples, progress, out)
