"""One option table: the command line, the pytest plugin and the certification profile are
made from it, so a source (or a setting) registered once is on all three."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, TypeVar

import pytest
import yaml

from zoneproof import errors
from zoneproof.cli import main
from zoneproof.components.harness import kinds, options, source
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Launcher, Source
from zoneproof.suites import profile, qualify

T = TypeVar("T")
SAMPLE = qualify.repo_root() / "certification" / "profile.example.yaml"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    options.add_arguments(parser)
    return parser


def _cli_flags() -> set[str]:
    return {flag for action in _parser()._actions for flag in action.option_strings}


def _pytest_flags() -> set[str]:
    return {f"--zp-{name}" for names, _, _ in options.pytest_options() for name in names}


def test_every_row_is_on_the_command_line_and_in_pytest() -> None:
    for kind in kinds.every():
        for row in options.rows(kind):
            if row.option.flags:
                assert f"--{row.name}" in _cli_flags()
                assert f"--zp-{row.name}" in _pytest_flags()
    assert {"--webhook-command", "--webhook-url", "--webhook-ca-bundle", "--webhook-registration",
            "--webhook-variant", "--webhook-manifests", "--controller-image-archive",
            "--controller-selector", "--controller-lease", "--components"} <= _cli_flags()
    assert "--controller-url" not in _cli_flags(), "a controller is not reached by URL"
    assert "--controller-registration" not in _cli_flags(), "only a webhook is registered"


def test_the_profile_takes_every_key_of_the_table(tmp_path: Path) -> None:
    data = yaml.safe_load(SAMPLE.read_text())
    data["components"]["controller"].update(selector="app=acme", lease="acme/leader")
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    loaded = profile.load(tmp_path / "p.yaml")
    assert loaded.scope.pytest_args() == ["--zp-controller-selector=app=acme",
                                          "--zp-controller-lease=acme/leader"]
    assert set(options.path_keys()) == {"ca_bundle", "manifests", "image_archive",
                                        "registration_file"}


def test_cli_settings_reach_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[qualify.Options] = []
    monkeypatch.setattr(qualify, "qualify", lambda _b, _s, o, **_k: seen.append(o) or 0)
    assert main.main(["qualify", "--controller-selector", "app=acme", "--", "-x"]) == 0
    assert seen[0].pytest_args == ["--zp-controller-selector=app=acme", "-x"]


def test_a_bad_setting_is_refused_by_pytest_naming_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess("--zp-controller-selector", "app in ((")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--zp-controller-selector selector 'app in ((' is not "
                                 "equality-based*"])


# -- a new delivery: one module + one registration --------------------------------------------
@dataclass(frozen=True, slots=True)
class Chart(Source):
    """A trivial source registered in the test: a chart directory."""

    chart: Path
    name: ClassVar[str] = "chart"
    options: ClassVar[tuple[Option, ...]] = (
        Option("chart", "{kind}: a chart directory", metavar="DIR", path=True, required=True,
               selects=True),)

    def to_dict(self) -> dict[str, str]:
        return {"chart": str(self.chart)}

    @classmethod
    def from_dict(cls, data: Mapping[str, str], kind: Kind) -> Chart:
        return cls(Path(data["chart"]))

    def problems(self, kind: Kind) -> list[str]:
        return [] if self.chart.is_dir() else [f"chart {self.chart} is not a directory"]

    def label(self, kind: Kind) -> str:
        return f"{kind} chart {self.chart}"

    def start(self, component: Component, launcher: Launcher[T]) -> T:
        raise NotImplementedError


@pytest.fixture
def chart_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    every = (*source.registered(), Chart)
    monkeypatch.setattr(source, "registered", lambda: every)
    options.rows.cache_clear()
    yield
    options.rows.cache_clear()


@pytest.mark.usefixtures("chart_registered")
def test_a_registered_source_is_on_every_surface(tmp_path: Path) -> None:
    assert {"--webhook-chart", "--controller-chart"} <= _cli_flags()
    assert {"--zp-webhook-chart", "--zp-controller-chart"} <= _pytest_flags()
    args = _parser().parse_args(["--controller-chart", str(tmp_path)])
    chosen = options.chosen(args)
    assert chosen.controller.source == Chart(tmp_path) and chosen.webhook == Component(Kind.WEBHOOK)
    assert Components.from_dict(chosen.to_json()) == chosen
    with pytest.raises(errors.ConfigError, match="--controller-command and --controller-chart "
                                                 "both name the controller under test"):
        options.from_choices(Kind.CONTROLLER, command="{python} c {kubeconfig} {identity}",
                             chart=str(tmp_path), flag="--")
    data = yaml.safe_load(SAMPLE.read_text())
    data["components"]["webhook"] = {"source": "chart", "chart": "missing-chart"}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(errors.ConfigError, match=f"components.webhook: chart "
                                                 f"{tmp_path / 'missing-chart'} is not a directory"):
        profile.load(tmp_path / "p.yaml")


def test_older_spellings_stay_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A renamed option keeps its old flag as an alias (on the command line and in pytest)."""
    every = options.rows

    def renamed(kind: str) -> tuple[options.Row, ...]:
        return tuple(replace(r, option=replace(r.option, flag="leader-lease", aliases=("lease",)))
                     if r.option.key == "lease" else r for r in every(kind))

    monkeypatch.setattr(options, "rows", renamed)
    args = _parser().parse_args(["--controller-lease", "a/b"])
    assert options.settings_given(args) == ["--zp-controller-leader-lease=a/b"]
    assert {"--zp-controller-leader-lease", "--zp-controller-lease"} <= _pytest_flags()
