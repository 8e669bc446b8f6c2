"""Looking at the human-readable evidence the way a person would: in a real headless browser.

Debian's chromium (``apt-get install -y chromium``; ``make browser`` does it) loads the
allure HTML report from a loopback HTTP server, once per page: the overview, then the page
of each chaos experiment's test, whose description must show the SLO table; and a page of
every timeline plot, each of which must load as an image. Each page is screenshotted
(``--screenshot``) and its rendered DOM read (``--dump-dom``, same launch: the allure app
has run, the description's iframe ``srcdoc`` included). ``look`` returns what was seen; the caller
asserts on it (a test) or records it (certify).
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import json
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from zoneproof import errors
from zoneproof._util import processes

__all__ = ["INSTALL", "FLAGS", "Page", "Seen", "chromium", "look", "page_text", "render", "serve"]

INSTALL = "apt-get install -y chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--window-size=1400,1000", "--virtual-time-budget=15000")
_TIMEOUT_S = 90.0
PLOTS_PAGE = "zoneproof-plots.html"


def chromium() -> Path:
    """The chromium executable; ConfigError names the install command."""
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return Path(found)
    raise errors.ConfigError(f"no chromium on PATH: install Debian's ({INSTALL}, or `make browser`)")


class _Text(HTMLParser):
    """Visible text of a document, iframe ``srcdoc`` documents included."""

    def __init__(self) -> None:
        super().__init__()
        self.skip = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        for name, value in attrs:
            if tag == "iframe" and name == "srcdoc" and value:
                self.parts.append(page_text(value))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip and data.strip():
            self.parts.append(data.strip())


def page_text(dom: str) -> str:
    """The visible text of a rendered page (one line per text node)."""
    parser = _Text()
    parser.feed(dom)
    return "\n".join(parser.parts)


def render(url: str, screenshot: Path | None = None) -> str:
    """The DOM of ``url`` after its scripts ran; with ``screenshot``, also a PNG of it."""
    browser = chromium()
    shot = []
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.unlink(missing_ok=True)
        shot = [f"--screenshot={screenshot}"]
    with tempfile.TemporaryDirectory(prefix="zoneproof-chromium-") as profile:  # a fresh profile
        dom = processes.run([str(browser), *FLAGS, f"--user-data-dir={profile}", *shot,
                             "--dump-dom", url], timeout_s=_TIMEOUT_S)
    if screenshot is not None and not screenshot.is_file():
        raise errors.ConfigError(f"chromium wrote no screenshot of {url} to {screenshot}")
    return dom


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        """Silence."""


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` over HTTP on a free loopback port (allure's app fetches its data; file://
    forbids that); its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass(frozen=True, slots=True)
class Page:
    """One page looked at: what it is, its screenshot, its visible text."""

    name: str
    url: str
    screenshot: Path
    text: str


@dataclass(frozen=True, slots=True)
class Seen:
    """What the browser showed: the overview, each experiment's page, the plots page."""

    overview: Page
    experiments: dict[str, Page] = field(default_factory=dict)
    plots: Page | None = None
    plots_loaded: tuple[str, ...] = ()
    """Experiments whose timeline plot loaded as an image."""

    def problems(self, experiments: Sequence[str]) -> list[str]:
        """What a person would miss: an experiment without its page or SLO table, a plot that
        did not load."""
        found = []
        for name in experiments:
            page = self.experiments.get(name)
            if page is None:
                found.append(f"experiment {name}: no test page in the allure report")
            elif "SLO" not in page.text or "bound" not in page.text:
                found.append(f"experiment {name}: its page shows no SLO table")
            if name not in self.plots_loaded:
                found.append(f"experiment {name}: its timeline plot did not load in the browser")
        return found


def _experiment_pages(report: Path, experiments: Sequence[str]) -> dict[str, str]:
    """Experiment → the allure test result id of its chaos test."""
    index = json.loads((report / "test-results.json").read_text())["byId"]
    wanted = {f"test_experiment[{name}]": name for name in experiments}
    return {wanted[r["name"]]: rid for rid, r in index.items() if r.get("name") in wanted}


def _plots_page(reports: Path, experiments: Sequence[str]) -> str:
    """An HTML page showing every experiment's timeline plot; each marks itself loaded."""
    figures = "".join(
        f'<figure><figcaption>{html.escape(name)}</figcaption><img src="chaos/{html.escape(name)}'
        f'/timeline.png" width="900" onload="this.parentNode.dataset.loaded=this.naturalWidth;'
        f"document.getElementById('loaded').textContent += ' loaded:{html.escape(name)}'\">"
        f"</figure>" for name in experiments)
    return (f"<!DOCTYPE html><html><head><title>zoneproof timeline plots</title></head><body>"
            f"<h1>timeline plots</h1><p id='loaded'></p>{figures}</body></html>")


_LOADED = re.compile(r"loaded:([A-Za-z0-9._-]+)")


def look(reports: Path, experiments: Sequence[str], shots: Path) -> Seen:
    """Open ``<reports>/allure-report`` and the experiments' plots in chromium; screenshots go
    to ``shots``. ConfigError when chromium or the report is missing."""
    report = reports / "allure-report"
    if not (report / "index.html").is_file():
        raise errors.ConfigError(f"no allure HTML report in {report}")
    (reports / PLOTS_PAGE).write_text(_plots_page(reports, experiments))
    with serve(reports) as base:
        def page(name: str, path: str) -> Page:
            url = f"{base}/{path}"
            shot = shots / f"{name}.png"
            return Page(name, url, shot, page_text(render(url, shot)))

        overview = page("allure-overview", "allure-report/index.html")
        pages = {name: page(f"allure-{name}", f"allure-report/index.html#{rid}")
                 for name, rid in sorted(_experiment_pages(report, experiments).items())}
        plots = page("timeline-plots", PLOTS_PAGE)
    return Seen(overview, pages, plots, tuple(_LOADED.findall(plots.text)))
