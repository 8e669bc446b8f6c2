"""``report.html``: the run on one self-contained page, opened from disk with no server, no
script and nothing fetched (a CI artefact, an e-mail attachment).

The verdict and counts per suite, the clusters tested and the components that ran, every SLO
judged, each chaos experiment with its outcome, its faults, its SLO table and its timeline
plot (the PNG inlined as a data URI), every failure with its message, the beds kept
(``report.beds``) and, for a certification, whether a browser looked at the report. Links
to the run's other files are relative, so they work wherever the directory is copied.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zoneproof.report import artefacts, beds, slo_table
from zoneproof.report.results import suites
from zoneproof.report.summary import Summary
from zoneproof.report.testids import experiment_of

__all__ = ["PAGE", "render", "write"]

PAGE = "report.html"
_SEEN = Path("evidence") / "browser" / "seen.json"
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0}
td,th{border:1px solid #bbb;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2} .PASS,.passed{color:#176f2c} .bad{color:#b00020;font-weight:bold}
.verdict{display:inline-block;padding:.2em .7em;border-radius:4px;color:#fff;font-weight:bold}
.v-PASS{background:#176f2c} .v-other{background:#b00020}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.6em;overflow-x:auto;font-size:12px}
section.experiment{margin:1.2em 0;padding:.2em 1em;border:1px solid #ddd;border-radius:4px}
img{max-width:100%;border:1px solid #eee} .muted{color:#666;font-size:13px}
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A table of already escaped cells."""
    return ("<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
            + "</table>")


def _outcome(outcome: str) -> str:
    return f'<span class="{"passed" if outcome in ("passed", "xfailed") else "bad"}">{_e(outcome)}</span>'


def _plot(path: Path) -> str:
    if not path.is_file():
        return '<p class="muted">no timeline plot was drawn</p>'
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="timeline of the experiment" src="data:image/png;base64,{data}">'


def _faults(path: Path) -> str:
    if not path.is_file():
        return ""
    try:
        records = artefacts.load_faults(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f'<p class="bad">{_e(path.name)} unreadable: {_e(exc)}</p>'
    rows = [[_e(r.kind), _e(", ".join(r.targets)), _e(", ".join(str(e) for e in r.effects)),
             _e("in force" if r.in_force_at is not None else "never in force"),
             _e("reverted" if r.reverted_at is not None else "NOT reverted")]
            for r in records]
    return _table(["fault", "targets", "effects it must cause", "", ""], rows) if rows else ""


def _experiments(run: Summary, reports: Path) -> str:
    parts = []
    for outcome in run.outcomes:
        if not outcome.nodeid.startswith("chaos/") or "[" not in outcome.nodeid:
            continue
        name = experiment_of(outcome.nodeid)
        where = reports / "chaos" / name
        files = " · ".join(f'<a href="chaos/{_e(name)}/{f}">{f}</a>' for f in
                           (artefacts.JOURNAL, artefacts.TIMELINE, artefacts.FAULTS)
                           if (where / f).is_file())
        slos = slo_table.to_html(outcome.slos) if outcome.slos else \
            '<p class="muted">no SLO judged</p>'
        parts.append(
            f'<section class="experiment" id="experiment-{_e(name)}"><h3>{_e(name)}: '
            f"{_outcome(outcome.outcome)} in {outcome.duration_s:.1f} s</h3>"
            f'<p class="muted">{_e(outcome.nodeid)} {files}</p>{_faults(where / artefacts.FAULTS)}'
            f"{slos}{_plot(where / 'timeline.png')}</section>")
    return "".join(parts) or '<p class="muted">no chaos experiment ran</p>'


def _kept_beds(reports: Path) -> str:
    rows = []
    for info in sorted((reports / beds.BEDS).glob("*/bed.json")):
        try:
            bed: dict[str, Any] = json.loads(info.read_text())
        except (OSError, ValueError):
            bed = {"name": info.parent.name, "not_saved": {"bed.json": "unreadable"}}
        base = f"{beds.BEDS}/{_e(info.parent.name)}"
        links = " · ".join(f'<a href="{base}/{f}">{f}</a>' for f in
                           ("events.json", "audit.log", "logs") if (info.parent / f).exists())
        missing = "; ".join(f"no {_e(k)}: {_e(v)}" for k, v in bed.get("not_saved", {}).items())
        rows.append([_e(bed.get("name")), _e(bed.get("backend")), _e(bed.get("role")), links,
                     missing])
    return _table(["bed", "backend", "role", "kept", "not kept"], rows) if rows else \
        '<p class="muted">no bed was kept (a run without --zp-report-dir keeps none)</p>'


def _browser(reports: Path) -> str:
    seen = reports / _SEEN
    if not seen.is_file():
        return ""
    try:
        data: dict[str, Any] = json.loads(seen.read_text())
    except (OSError, ValueError):
        data = {"looked": False, "reason": f"{_SEEN} is unreadable"}
    if not data.get("looked"):
        return f'<h2>Browser</h2><p class="bad">{_e(data.get("reason", "not looked at"))}</p>'
    problems = data.get("problems") or []
    return (f"<h2>Browser</h2><p>looked at in {_e(data.get('browser'))}: "
            f"{len(data.get('pages', {}))} pages, {len(data.get('plots_loaded', []))} plots "
            f"loaded, {len(problems)} problem(s)</p>"
            + "".join(f'<p class="bad">{_e(p)}</p>' for p in problems))


def render(run: Summary, reports: Path, *, title: str) -> str:
    """The page of the run whose files are in ``reports``."""
    verdict = (f'<span class="verdict v-{"PASS" if run.passed else "other"}">'
               f"{_e(run.verdict)}</span>")
    suite_rows = [[_e(name), _e(", ".join(f"{n} {o}" for o, n in counts.items()))]
                  for name, counts in suites(run).items()]
    slo_rows = [[_e(r.name), _e(experiment_of(test)),
                 f'<span class="{"PASS" if r.met else "bad"}">{_e(r.status)}</span>',
                 _e("no data" if r.observed is None else f"{r.observed:.2f}"),
                 _e(f"≤ {r.threshold:g}"), _e(r.unit), _e(r.message)] for test, r in run.slos]
    ran = run.versions.get("components", {})
    component_rows = [[_e(kind), _e(json.dumps(entry.get("component", entry)))]
                      for kind, section in ran.items() if isinstance(section, dict)
                      for entry in section.get("ran", [])
                      or [{"component": section.get("note", "never started")}]]
    slos = _table(["SLO", "experiment", "result", "measured", "bound", "unit", "judged"],
                  slo_rows) if slo_rows else '<p class="muted">no SLO judged</p>'
    failures = "".join(f"<h3>{_e(o.nodeid)}</h3><pre>{_e(o.message or o.outcome)}</pre>"
                       for o in run.failures) or '<p class="PASS">none</p>'
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>"
        f"<p>{verdict} started {_e(run.started)}, finished {_e(run.finished)} "
        f"({run.duration_s:.0f} s); pytest exit {run.pytest_exit}</p>"
        f"<h2>Suites</h2>{_table(['suite', 'tests'], suite_rows)}"
        + "".join(f"<p>cluster {_e(c.role)}: {_e(c.describe())}</p>" for c in run.clusters)
        + (f"<h2>Components under test</h2>{_table(['kind', 'what ran'], component_rows)}"
           if component_rows else "")
        + f"<h2>SLOs</h2>{slos}"
        f"<h2>Chaos experiments</h2>{_experiments(run, reports)}"
        f"<h2>Failures</h2>{failures}<h2>Beds kept</h2>{_kept_beds(reports)}{_browser(reports)}"
        f'<p class="muted">zoneproof {_e(run.versions.get("zoneproof", ""))} · '
        '<a href="summary.json">summary.json</a> · <a href="junit.xml">junit.xml</a></p>'
        "</body></html>\n")


def write(run: Summary, reports: Path, *, title: str) -> Path:
    """Write ``report.html`` into ``reports``; its path."""
    path = reports / PAGE
    path.write_text(render(run, reports, title=title))
    return path
