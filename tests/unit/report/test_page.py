"""report.html: one self-contained page (nothing fetched, no script), opened from disk."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot

from zoneproof.report import page, summary
from zoneproof.slo import SloResult, SloStatus

EXPERIMENT = "chaos/test_experiments.py::test_experiment[zone-outage]"


def _reports(tmp_path: Path) -> tuple[summary.Summary, Path]:
    slos = [SloResult("notready-detection", SloStatus.PASS, 8.2, 10.0, "seconds", "ok"),
            SloResult("force-delete", SloStatus.FAIL, 3.0, 1.0, "seconds", "too slow")]
    failed = summary.ItemResult("conformance/ha_config/test_cases.py::test_case[b]", "failed", 1.0,
                             message="AssertionError: <patch> & not applied")
    run = summary.build([summary.ItemResult(EXPERIMENT, "passed", 31.0, slos), failed],
                        started="2026-01-01T00:00:00Z", finished="2026-01-01T00:10:00Z",
                        duration_s=600.0, versions={"zoneproof": "0.1.0"}, exit_status=1)
    chaos = tmp_path / "chaos" / "zone-outage"
    chaos.mkdir(parents=True)
    figure = pyplot.figure(figsize=(2, 1))
    figure.savefig(chaos / "timeline.png")
    pyplot.close(figure)
    (chaos / "faults.json").write_text(json.dumps([{
        "kind": "zone-outage", "effects": ["nodes-not-ready"], "targets": ["zone-a"],
        "injected_at": 1.0, "reverted_at": 9.0, "in_force_at": 2.0}]))
    (chaos / "journal.json").write_text("{}")
    bed = tmp_path / "beds" / "zoneproof"
    bed.mkdir(parents=True)
    (bed / "events.json").write_text("[]")
    (bed / "bed.json").write_text(json.dumps({"name": "zoneproof", "backend": "local",
                                              "role": "the run's cluster", "saved": {},
                                              "not_saved": {"audit log": "none"}}))
    return run, tmp_path


def test_the_page_holds_the_run_and_fetches_nothing(tmp_path: Path) -> None:
    run, reports = _reports(tmp_path)
    text = page.write(run, reports, title="zoneproof run X").read_text()
    assert "<script" not in text
    assert not re.search(r'(src|href)="(https?:)?//', text)  # nothing from elsewhere
    png = (reports / "chaos" / "zone-outage" / "timeline.png").read_bytes()
    assert f"data:image/png;base64,{base64.b64encode(png).decode()}" in text
    for shown in ("FAIL", "notready-detection", "force-delete", "too slow", "zone-outage",
                  "nodes-not-ready", "AssertionError: &lt;patch&gt; &amp; not applied",
                  'href="chaos/zone-outage/journal.json"', 'href="beds/zoneproof/events.json"',
                  "no audit log: none", "conformance/ha_config"):
        assert shown in text, shown


def test_a_certification_page_says_whether_a_browser_looked(tmp_path: Path) -> None:
    run, reports = _reports(tmp_path)
    seen = reports / "evidence" / "browser"
    seen.mkdir(parents=True)
    (seen / "seen.json").write_text(json.dumps({"looked": False, "reason": "not looked at in a "
                                                "browser: no chromium on PATH"}))
    assert "no chromium on PATH" in page.render(run, reports, title="t")


def test_an_unreadable_file_is_said_not_fatal(tmp_path: Path) -> None:
    run, reports = _reports(tmp_path)
    (reports / "chaos" / "zone-outage" / "faults.json").write_text("[{not json")
    (reports / "beds" / "zoneproof" / "bed.json").write_text("{")
    text = page.render(run, reports, title="t")
    assert "faults.json unreadable" in text and "bed.json: unreadable" in text
