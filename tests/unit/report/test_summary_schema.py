"""summary.json's shape is one pydantic model (``summary_file.SummaryFile``): the JSON Schema
shipped in the package and the docs is its current one (``make schemas`` writes both), what a
run writes is read back unchanged, an earlier v2 writer's file still reads, and a file of
another shape is refused one line per problem, each naming its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.report import summary, summary_file
from zoneproof.runs.identity import ClusterIdentity
from zoneproof.slo import SloResult, SloStatus
from zoneproof.slo.verdict import NotJudged

DOCS_COPY = (Path(__file__).resolve().parents[3] / "docs" / "reference" / "schemas"
             / "summary.schema.json")

#: What the first v2 writer wrote (before clusters, timing, self-check, not_judged and the
#: tests' timings): such files are kept by nightly users and must still read.
EARLIEST_V2 = {
    "schema": "zoneproof.dev/v2/Summary", "verdict": "FAIL", "pytest_exit": 1,
    "started": "2026-11-20T10:00:00+00:00", "finished": "2026-11-20T10:05:00+00:00",
    "duration_s": 300,
    "failures": [{"test": "chaos/test_experiments.py::test_experiment[zone-outage]",
                  "message": "SLO zone-outage-recovery FAIL"}],
    "slos": [{"test": "chaos/test_experiments.py::test_experiment[zone-outage]",
              "name": "zone-outage-recovery", "status": "FAIL", "observed": 91.5,
              "threshold": 60.0, "unit": "seconds", "message": "91.5 s > 60 s", "pass": False}],
    "tests": [{"test": "chaos/test_experiments.py::test_experiment[zone-outage]",
               "outcome": "failed", "duration_s": 120.4}],
    "versions": {"zoneproof": "0.1.0", "components": {}},
}


def test_the_shipped_schema_is_the_models() -> None:
    assert summary_file.SCHEMA_FILE.read_text() == summary_file.json_schema(), "run `make schemas`"
    assert DOCS_COPY.read_text() == summary_file.json_schema(), "run `make schemas`"
    schema = json.loads(summary_file.SCHEMA_FILE.read_text())
    assert schema["additionalProperties"] is False
    assert schema["properties"]["schema"]["const"] == summary.SCHEMA


def _run() -> summary.Summary:
    slo = SloResult("lease-failover", SloStatus.PASS, 4.2, 5.0, "seconds", "met")
    tests = [summary.ItemResult("chaos/test_experiments.py::test_experiment[kill-leader]",
                                "passed", 31.27, [slo], setup_s=12.0, start_s=1.0, end_s=32.3,
                                worker="gw1"),
             summary.ItemResult("conformance/ha_config/test_x.py::test_y", "failed", 0.5,
                                message="boom")]
    return summary.build(tests, started="s", finished="f", duration_s=40.0,
                         versions={"zoneproof": "x"}, exit_status=1,
                         clusters=[ClusterIdentity("zp", "local", "https://127.0.0.1:1", "uid",
                                                   "v1.33")],
                         not_judged=[NotJudged("chaos/x", "skipped")])


def test_what_a_run_writes_reads_back_unchanged(tmp_path: Path) -> None:
    written = _run()
    path = summary.write(tmp_path / "summary.json", written)
    read = summary.load(path)
    assert read.to_dict() == written.to_dict()
    assert read.failures[0].message == "boom" and read.slos[0][1].observed == 4.2
    assert read.experiment_times()[0]["worker"] == "gw1"


def test_an_earlier_v2_file_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(EARLIEST_V2))
    run = summary.load(path)
    assert run.verdict == "FAIL" and run.clusters == () and run.not_judged == ()
    assert run.slos[0][1].status == SloStatus.FAIL and not run.slos[0][1].met
    assert run.outcomes[0].setup_s == 0.0 and run.outcomes[0].start_s is None


@pytest.mark.parametrize(("edit", "says"), [
    (lambda d: d.update(verdict="GREEN"), "verdict: 'GREEN' is not supported: write one of 'PASS'"),
    (lambda d: d["tests"][0].update(outcom="x"),
     "tests[0]: unknown key 'outcom' (did you mean 'outcome'?); valid keys: test, outcome"),
    (lambda d: d["slos"][0].pop("threshold"), "slos[0].threshold: missing"),
    (lambda d: d.update(duration_s="long"), "duration_s: Input should be a valid number"),
    (lambda d: d.update(schema="zoneproof.dev/v1/Summary"), "written by another zoneproof"),
])
def test_another_shape_is_refused_naming_the_file_and_the_place(tmp_path: Path, edit: object,
                                                                 says: str) -> None:
    data = json.loads(json.dumps(EARLIEST_V2))
    edit(data)  # type: ignore[operator]
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(data))
    with pytest.raises(errors.ConfigError) as refused:
        summary.load(path)
    text = str(refused.value)
    assert str(path) in text and says in text, text
