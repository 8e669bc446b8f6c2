"""The shape of ``summary.json`` (schema ``zoneproof.dev/v2/Summary``): the pydantic model
``SummaryFile`` that ``summary.Summary`` writes itself as and is read back from (``zoneproof
results``, ``compare``, ``verify``, the benches).

Its JSON Schema ships as ``summary.schema.json`` beside this module (``make schemas`` writes
it; a unit test holds the two equal). Keys that earlier v2 writers left out have defaults, so
their files still read; a key the model does not know is refused, named, with the valid ones.
A new key goes here (with a default when older files lack it), then ``make schemas``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pydantic

from zoneproof._util import schemas

__all__ = ["SCHEMA", "SCHEMA_FILE", "ClusterRow", "ExperimentTime", "FailureRow", "NotJudgedRow",
           "SelfCheck", "SloRow", "SuiteTime", "SummaryFile", "TestRow", "Timing", "json_schema"]

SCHEMA = "zoneproof.dev/v2/Summary"
"""v2: an SLO row is ``SloResult.to_dict`` (observed, threshold, message) plus test, pass."""
#: The JSON Schema of summary.json, shipped in the package (and in docs/reference/schemas/).
SCHEMA_FILE = Path(__file__).with_name("summary.schema.json")

Verdict = Literal["PASS", "FAIL", "PARTIAL", "INTERRUPTED"]
Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "interrupted"]
SloStatusName = Literal["PASS", "FAIL", "NO_DATA", "INVALID", "VOID", "NOT_RUN"]


class _Row(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class TestRow(_Row):
    """One test (``tests``); its SLOs are in ``slos``, its failure in ``failures``."""

    __test__ = False  # not a pytest test class

    test: str = pydantic.Field(description="pytest node id")
    outcome: Outcome
    suite: str = pydantic.Field(default="", description="its file's directory, or self-check")
    duration_s: float = pydantic.Field(description="set-up, call and teardown")
    setup_s: float = pydantic.Field(default=0.0, description="its set-up's share (a bed made "
                                    "for it counts here)")
    start_s: float | None = pydantic.Field(default=None, description="when its set-up began, "
                                           "seconds after the run started")
    end_s: float | None = pydantic.Field(default=None, description="when its teardown ended")
    worker: str = pydantic.Field(default="", description="the xdist worker (gw0...)")
    self_check: bool = pydantic.Field(default=False, description="a self-check test")
    void_runs: int = pydantic.Field(default=0, description="runs of its chaos experiment that "
                                    "judged nothing (only VOID SLOs) before the run its verdict "
                                    "is of")


class SloRow(_Row):
    """One SLO judged by one test."""

    test: str
    name: str
    status: SloStatusName
    observed: float | None
    threshold: float
    unit: str
    message: str = ""
    met: bool = pydantic.Field(alias="pass", description="only PASS passes")


class FailureRow(_Row):
    """A test that failed or errored, and its message."""

    test: str
    message: str


class ClusterRow(_Row):
    """A cluster the run tested (``runs.identity.ClusterIdentity``)."""

    name: str
    backend: str
    server: str
    kube_system_uid: str
    version: str
    role: str = "under test"


class NotJudgedRow(_Row):
    """What should have judged the run and did not, and why."""

    test: str
    reason: str
    asked: bool = pydantic.Field(default=False, description="the user asked to leave it out")


class SuiteTime(_Row):
    """Where the run's time went, per suite."""

    suite: str
    tests: int
    busy_s: float = pydantic.Field(description="its tests' summed time")
    setup_s: float
    start_s: float | None
    end_s: float | None
    wall_s: float | None = pydantic.Field(description="first start to last end")
    workers: list[str]


class ExperimentTime(_Row):
    """One chaos experiment run: its time, set-up (a bed's making) included."""

    experiment: str
    outcome: Outcome
    duration_s: float
    setup_s: float
    start_s: float | None
    end_s: float | None
    worker: str
    void_runs: int = pydantic.Field(default=0, description="runs that judged nothing (only "
                                    "VOID SLOs) before the judged one; their time is included")


class Timing(_Row):
    """Where the run's time went."""

    suites: list[SuiteTime] = pydantic.Field(default_factory=list)
    experiments: list[ExperimentTime] = pydantic.Field(default_factory=list)


class SelfCheck(_Row):
    """Whether the self-check ran, with its tests' counts."""

    ran: bool = False
    counts: dict[str, int] = pydantic.Field(default_factory=dict)
    failed: list[str] = pydantic.Field(default_factory=list)


class SummaryFile(_Row):
    """summary.json: a run's verdict, its tests, SLOs and failures, versions and clusters."""

    model_config = pydantic.ConfigDict(extra="forbid", strict=True, populate_by_name=True,
                                       title="Summary")

    schema_id: Literal["zoneproof.dev/v2/Summary"] = pydantic.Field(alias="schema")
    verdict: Verdict
    pytest_exit: int
    started: str = pydantic.Field(description="ISO 8601, UTC")
    finished: str
    duration_s: float
    counts: dict[str, int] = pydantic.Field(default_factory=dict,
                                            description="tests by outcome")
    slo_counts: dict[str, int] = pydantic.Field(default_factory=dict,
                                                description="SLO results by status")
    failures: list[FailureRow]
    slos: list[SloRow]
    tests: list[TestRow]
    timing: Timing = pydantic.Field(default_factory=Timing)
    self_check: SelfCheck = pydantic.Field(default_factory=SelfCheck)
    versions: dict[str, Any] = pydantic.Field(description="zoneproof, Python, binaries, "
                                              "components")
    clusters: list[ClusterRow] = pydantic.Field(default_factory=list)
    not_judged: list[NotJudgedRow] = pydantic.Field(default_factory=list)
    interrupted_by: str = pydantic.Field(default="", description="the signal that ended the "
                                         "run, if one did")

    def to_json(self) -> dict[str, Any]:
        """The document as summary.json writes it."""
        return self.model_dump(mode="json", by_alias=True)


def json_schema() -> str:
    """``SummaryFile``'s JSON Schema as ``SCHEMA_FILE`` holds it (what ``make schemas`` writes)."""
    return schemas.json_schema(SummaryFile)
