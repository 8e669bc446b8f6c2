"""A past run read back: ``zoneproof results [RUN|BUNDLE]`` (its verdict, SLO table, failures).

A run is a report directory (``reports/<UTC time>/``, the newest when none is named), a run's
name under the reports root, a ``summary.json`` or a certification bundle (read in place,
without extracting; ``zoneproof verify`` checks its signature).
"""

from __future__ import annotations

import json
import tarfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from zoneproof import errors
from zoneproof.report import summary as summary_
from zoneproof.report.summary import Summary
from zoneproof.report.testids import experiment_of, suite_of

__all__ = ["SUMMARY", "RunResults", "latest", "load", "locate", "slo_table", "suites"]

SUMMARY = "summary.json"
_CERTIFICATION = "certification.yaml"
_BUNDLE_SUFFIX = ".tar.gz"


@dataclass(frozen=True, slots=True)
class RunResults:
    """One run as read back: where from, its summary and (a bundle's) certification."""

    source: Path
    summary: Summary
    certification: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """The run's name: its report directory, or the bundle's file name."""
        return self.source.parent.name if self.source.name == SUMMARY else self.source.name

    def to_dict(self) -> dict[str, Any]:
        """What ``-o json|yaml`` prints."""
        run = self.summary.to_dict()
        data: dict[str, Any] = {
            "run": self.name, "source": str(self.source), "verdict": run["verdict"],
            "started": run["started"], "finished": run["finished"],
            "duration_s": run["duration_s"], "counts": run["counts"],
            "suites": suites(self.summary), "slo_counts": run["slo_counts"],
            "slos": run["slos"], "failures": run["failures"], "clusters": run["clusters"]}
        if self.certification is not None:
            data["certification"] = {k: self.certification.get(k) for k in
                                     ("verdict", "vendor", "problems", "suites", "experiments")}
        return data

    def text(self) -> list[str]:
        """What ``-o text`` prints."""
        run = self.summary
        counts = ", ".join(f"{n} {outcome}" for outcome, n in
                           sorted(Counter(o.outcome for o in run.outcomes).items()))
        lines = [f"run {self.name}: {run.verdict}", f"  from {self.source}",
                 f"  started {run.started}, finished {run.finished} ({run.duration_s:.0f} s)",
                 f"  tests: {counts or 'none'}"]
        lines += [f"  suite {name}: {', '.join(f'{n} {o}' for o, n in c.items())}"
                  for name, c in suites(run).items()]
        lines += [f"  cluster {c.role}: {c.describe()}" for c in run.clusters]
        if self.certification is not None:
            vendor = self.certification.get("vendor") or {}
            lines.append(f"  certification: {self.certification.get('verdict')} for "
                         f"{vendor.get('product')} {vendor.get('version')} ({vendor.get('vendor')}); "
                         "signature not checked here: `zoneproof verify BUNDLE --key PUB`")
            lines += [f"    problem: {p}" for p in self.certification.get("problems") or []]
        lines += ["", *slo_table(run)] if run.slos else ["", "no SLO was judged"]
        if run.failures:
            lines += ["", f"{len(run.failures)} failed:"]
            for outcome in run.failures:
                lines.append(f"  FAILED {outcome.nodeid}")
                lines += [f"    {line}" for line in outcome.message.strip().splitlines()[:6]]
        return lines


def suites(run: Summary) -> dict[str, dict[str, int]]:
    """Suite → its tests' outcome counts."""
    found: dict[str, Counter[str]] = {}
    for outcome in run.outcomes:
        found.setdefault(suite_of(outcome.nodeid), Counter())[outcome.outcome] += 1
    return {name: dict(sorted(c.items())) for name, c in sorted(found.items())}


def slo_table(run: Summary) -> list[str]:
    """Each SLO judged: name, experiment, bound, measured, unit, result."""
    lines = [f"{'SLO':<34}{'experiment':<36}{'bound':>9}{'measured':>10} {'unit':<8}result"]
    for test, result in run.slos:
        measured = "-" if result.observed is None else f"{result.observed:.2f}"
        lines.append(f"{result.name:<34}{experiment_of(test):<36}{result.threshold:>9g}"
                     f"{measured:>10} {result.unit:<8}{result.status}")
    counts = run.slo_counts
    others = ", ".join(f"{n} {status}" for status, n in counts.items() if status != "PASS")
    lines.append(f"SLOs: {counts.get('PASS', 0)} passed" + (f", not passed: {others}" if others else ""))
    return lines


def latest(reports: Path) -> Path:
    """The newest run under ``reports`` (report directories are named by their UTC start)."""
    runs = sorted(p for p in reports.glob(f"*/{SUMMARY}")) if reports.is_dir() else []
    if not runs:
        raise errors.ConfigError(f"no run with a {SUMMARY} under {reports}: name a report "
                                 "directory or bundle, or pass --reports the directory qualify "
                                 "wrote to")
    return runs[-1].parent


def locate(target: str | None, reports: Path) -> Path:
    """The report directory, summary.json or bundle ``target`` names (a path, or a run's name
    under ``reports``); the newest run under ``reports`` when None."""
    if target is None:
        return latest(reports)
    for candidate in (Path(target), reports / target):
        if candidate.is_dir() and (candidate / SUMMARY).is_file():
            return candidate
        if candidate.is_file() and (candidate.name == SUMMARY
                                    or candidate.name.endswith(_BUNDLE_SUFFIX)):
            return candidate
    raise errors.ConfigError(f"{target!r} is no run: name a report directory (with a {SUMMARY}), "
                             f"a run under {reports}, a {SUMMARY} or a .certification.tar.gz")


def _from_bundle(path: Path) -> RunResults:
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            def member(name: str) -> bytes:
                try:
                    stream = tar.extractfile(name)
                except KeyError:
                    stream = None
                if stream is None:
                    raise errors.ConfigError(f"{path} holds no {name}: not a zoneproof "
                                             "certification bundle")
                return stream.read()

            run = Summary.from_dict(json.loads(member(SUMMARY)), f"{path}: {SUMMARY}")
            certification = yaml.safe_load(member(_CERTIFICATION))
    except (OSError, tarfile.TarError, EOFError, ValueError, KeyError, TypeError,
            yaml.YAMLError) as exc:
        raise errors.ConfigError(f"cannot read the bundle {path}: {exc}") from None
    return RunResults(path, run, certification if isinstance(certification, dict) else None)


def load(path: Path) -> RunResults:
    """The run at ``path`` (``locate``'s answer); ConfigError if it cannot be read."""
    if path.is_file() and path.name.endswith(_BUNDLE_SUFFIX):
        return _from_bundle(path)
    file = path if path.name == SUMMARY else path / SUMMARY
    return RunResults(file, summary_.load(file))
