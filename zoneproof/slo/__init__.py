"""SLOs and verdicts: pure functions from data to PASS/FAIL, never I/O on a cluster.

Belongs here: the versioned SLO file (schema, defaults, overrides: ``spec``), the figure
behind each metric computed from a run's ``figures.Evidence`` (its Timeline and
FaultRecords, no chaos run: ``figures`` over the pure ``metrics``), the proof each fault
took effect (``effect_checks``), judging figures against SLOs (``results``: the one
``SloResult`` form), the strict verdict over a chaostoolkit journal (``verdict``), and
checking recorded histories (``linearizability``: porcupine's verdict per key). Not here:
measuring (measure), injecting (faults), writing reports (report).
"""

from zoneproof.slo import effect_checks, figures
from zoneproof.slo.effect_checks import EffectCheck
from zoneproof.slo.figures import Evidence
from zoneproof.slo.results import SloResult, SloStatus, evaluate
from zoneproof.slo.spec import SCHEMA_VERSION, Slo, SloSet, load_slos
from zoneproof.slo.verdict import Finding, FindingKind, Verdict, judge

__all__ = [
    "SCHEMA_VERSION",
    "EffectCheck",
    "Evidence",
    "Finding",
    "FindingKind",
    "Slo",
    "SloResult",
    "SloSet",
    "SloStatus",
    "Verdict",
    "effect_checks",
    "evaluate",
    "figures",
    "judge",
    "load_slos",
]
