"""SLOs and verdicts: pure functions from data to PASS/FAIL, never I/O on a cluster.

Belongs here: the versioned SLO file (schema, defaults, overrides), judging measured
values against it, the strict verdict over a chaostoolkit journal, and checking recorded
histories (``linearizability``: porcupine's verdict per key). Not here: measuring
(measure), injecting (faults), writing reports (report).
"""

from zoneproof.slo.results import SloResult, SloStatus, evaluate
from zoneproof.slo.spec import SCHEMA_VERSION, Slo, SloSet, load_slos
from zoneproof.slo.verdict import Finding, FindingKind, Verdict, judge

__all__ = [
    "SCHEMA_VERSION",
    "Finding",
    "FindingKind",
    "Slo",
    "SloResult",
    "SloSet",
    "SloStatus",
    "Verdict",
    "evaluate",
    "judge",
    "load_slos",
]
