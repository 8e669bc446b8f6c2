"""The human-readable evidence, looked at in a real headless chromium: the allure HTML report
shows every chaos experiment's page with its SLO table, and every timeline plot loads.

The report is made by the real pipeline — pytest with allure-pytest and the zoneproof
plugin (which turns recorded SLO results into the SLO table), real timeline plots, the
pinned Allure 3 CLI — from a run whose tests stand in for the experiments (one per
chaos/*.yaml, each recording SLO results and attaching its plot), plus one that records
none and draws nothing, which the check must name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.report import allure_html, browser
from zoneproof.suites import qualify

EXPERIMENTS = qualify.experiments(qualify.repo_root())
UNREPORTED = "no-slos-no-plot"
#: One worker runs the module: its report is made and looked at once (``seen``).
pytestmark = [pytest.mark.xdist_group("report-in-browser")]

RUN = '''
import allure, pytest
from pathlib import Path
from zoneproof.faults import FaultRecord
from zoneproof.measure import Timeline
from zoneproof.report import junit, plots
from zoneproof.slo.results import SloResult, SloStatus

REPORTS = Path({reports!r})

@pytest.mark.parametrize("name", {experiments!r})
def test_experiment(name, record_property):
    clock = iter([0.0, 1.0, 2.0, 12.0, 13.0, 20.0])
    timeline = Timeline(clock=lambda: next(clock))
    for node in ("a1", "b1"):
        timeline.add("node_ready", node, status="True", zone="zone-" + node[0])
    timeline.add("node_ready", "a1", status="Unknown", zone="zone-a")
    timeline.add("lease_holder", "default/l", holder="r1")
    timeline.add("node_ready", "a1", status="True", zone="zone-a")
    fault = FaultRecord(name, (), ("a1",), injected_at=5.0, reverted_at=15.0)
    drawn = plots.plot_timeline(timeline.events, [fault], REPORTS / "chaos" / name / "timeline",
                                title=name)
    allure.attach.file(str(drawn[0]), name="timeline.png", attachment_type=allure.attachment_type.PNG)
    record_property(*junit.slo_property(SloResult("node-not-ready-detection", SloStatus.PASS,
                                                  7.0, 18.0, "seconds", "")))
    record_property(*junit.slo_property(SloResult("lease-failover", SloStatus.PASS, 6.9, 9.0,
                                                  "seconds", "")))

def test_experiment_unreported():
    pass
'''


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, browser.Seen]:
    try:
        browser.chromium()
    except errors.ConfigError:
        pytest.skip(f"no headless browser: install Debian's chromium ({browser.INSTALL}, or "
                    "`make browser`)")
    try:
        allure_html.allure_cli()
    except errors.ConfigError as exc:
        pytest.skip(f"no allure CLI: {exc}")
    work, reports = tmp_path_factory.mktemp("run"), tmp_path_factory.mktemp("reports")
    (work / "test_run.py").write_text(
        RUN.format(reports=str(reports), experiments=EXPERIMENTS)
        .replace("def test_experiment_unreported():",
                 f"@pytest.mark.parametrize('name', [{UNREPORTED!r}])\n"
                 "def test_experiment_unreported(name):"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", f"--alluredir={reports / 'allure-results'}",
                          "test_run.py"], cwd=work, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # the stand-in for an experiment that reported nothing is named like the others
    for path in (reports / "allure-results").glob("*-result.json"):
        data = json.loads(path.read_text())
        if data["name"].startswith("test_experiment_unreported"):
            data["name"] = f"test_experiment[{UNREPORTED}]"
            path.write_text(json.dumps(data))
    allure_html.generate(reports / "allure-results", reports / "allure-report",
                         name="zoneproof report in a browser")
    return reports, browser.look(reports, [*EXPERIMENTS, UNREPORTED], reports / "shots")


def test_every_experiment_shows_its_slo_table(seen: tuple[Path, browser.Seen]) -> None:
    _, looked = seen
    assert not looked.problems(EXPERIMENTS), looked.problems(EXPERIMENTS)
    for name in EXPERIMENTS:
        text = looked.experiments[name].text
        assert f"test_experiment[{name}]" in text
        for expected in ("SLOs judged on this run", "node-not-ready-detection", "lease-failover",
                         "7.00", "≤ 18", "PASS"):
            assert expected in text, f"{name}: {expected!r} not on its page"


def test_the_overview_counts_every_test(seen: tuple[Path, browser.Seen]) -> None:
    _, looked = seen
    assert "zoneproof report in a browser" in looked.overview.text
    assert str(len(EXPERIMENTS) + 1) in looked.overview.text.splitlines()


def test_every_plot_loads(seen: tuple[Path, browser.Seen]) -> None:
    _, looked = seen
    assert set(looked.plots_loaded) == set(EXPERIMENTS)


def test_screenshots_are_pictures(seen: tuple[Path, browser.Seen]) -> None:
    _, looked = seen
    pages = [looked.overview, *looked.experiments.values()]
    assert looked.plots is not None
    for page in [*pages, looked.plots]:
        data = page.screenshot.read_bytes()
        assert data[:4] == b"\x89PNG" and len(data) > 10_000, page.name


def test_an_experiment_without_slos_or_plot_is_named(seen: tuple[Path, browser.Seen]) -> None:
    _, looked = seen
    assert looked.problems([UNREPORTED]) == [
        f"experiment {UNREPORTED}: its page shows no SLO table",
        f"experiment {UNREPORTED}: its timeline plot did not load in the browser"]
