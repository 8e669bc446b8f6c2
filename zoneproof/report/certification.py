"""``certification.yaml`` and the attested result: who, what, when, and the verdicts.

Built from what the run wrote — summary.json (outcomes, SLO results, versions, the
components exactly as they ran), the evidence read back from the cluster — and from the
vendor's profile. It lists only the components certified; a reference that stood in for a
kind the profile did not name is listed apart (``stood_in``). The certification passes
only if the run passed, every suite passed, every chaos experiment passed (one skipped or
not run fails it) and no evidence is missing. ``predicate`` is the part the in-toto attestation carries.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from zoneproof.binaries import PINS
from zoneproof.exit_codes import ExitCode
from zoneproof.report.summary import GATE_SUITES, Summary, experiment_of
from zoneproof.slo.verdict import exit_code

__all__ = ["API_VERSION", "KIND", "NOT_APPLICABLE", "NOT_CERTIFIED", "SUITES", "Vendor", "document",
           "experiment_verdicts", "load_json", "predicate", "slo_verdicts", "suite_verdicts",
           "to_yaml"]

API_VERSION = "zoneproof.dev/v1"
KIND = "Certification"
#: Suite name → the test id prefixes of its tests (the gate's suites, qualify's SUITES).
SUITES = {suite: tuple(f"{d}/" for d in dirs) for suite, dirs in GATE_SUITES.items()}
NOT_CERTIFIED = {
    "integration": "zoneproof's own integration tests (tests/integration) prove zoneproof, not "
                   "the components certified: they run in zoneproof's make test, not here",
    "mutants": "the conformance suites against every broken variant of the reference "
               "(zoneproof mutants): zoneproof's own property, run by make test",
}
"""What a certification does not run, and why (certification.yaml's ``not_certified``)."""
NOT_APPLICABLE = "NOT_APPLICABLE"
"""An experiment's verdict when it does not apply to the components certified (with why)."""


@dataclass(frozen=True, slots=True)
class Vendor:
    """Who asks for the certification, and of what."""

    vendor: str
    product: str
    version: str
    contact: str


def load_json(path: Path) -> dict[str, Any]:
    """A JSON document the run wrote (summary.json, evidence); {} if missing or unreadable
    (the certification then names it missing)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def suite_verdicts(summary: Summary) -> dict[str, dict[str, Any]]:
    """Suite → {verdict, counts, failed}: FAIL if a test failed, NOT_RUN if none passed. The
    self-check's tests (when it ran) are not the suite's: ``document``'s ``self_check``."""
    out: dict[str, dict[str, Any]] = {}
    for suite, prefix in SUITES.items():
        tests = [t for t in summary.outcomes if t.nodeid.startswith(prefix) and not t.self_check]
        counts = Counter(t.outcome for t in tests)
        failed = sorted(t.nodeid for t in tests if t.failed)
        verdict = "FAIL" if failed else "PASS" if counts["passed"] else "NOT_RUN"
        out[suite] = {"verdict": verdict, "counts": dict(sorted(counts.items())), "failed": failed}
    return out


def experiment_verdicts(summary: Summary, experiments: Sequence[str],
                        not_applicable: Mapping[str, str] | None = None
                        ) -> dict[str, dict[str, Any]]:
    """Each chaos experiment → {verdict, outcome, duration_s}; one that did not run is NOT_RUN,
    one of ``not_applicable`` (name → why) is NOT_APPLICABLE with its reason."""
    ran = {name: t for t in summary.outcomes if (name := experiment_of(t.nodeid)) is not None}
    out: dict[str, dict[str, Any]] = {
        name: {"verdict": NOT_APPLICABLE, "outcome": why}
        for name, why in (not_applicable or {}).items()}
    for name in experiments:
        test = ran.get(name)
        if test is None:
            out[name] = {"verdict": "NOT_RUN", "outcome": "not collected"}
            continue
        out[name] = {"verdict": "PASS" if test.outcome == "passed" else
                     "FAIL" if test.failed else "NOT_RUN",
                     "outcome": test.outcome, "duration_s": round(test.duration_s, 2)}
    return out


def slo_verdicts(summary: Summary) -> list[dict[str, Any]]:
    """Each SLO judged: its experiment and its result (``SloResult.to_dict``), pass."""
    return [{"experiment": test.rsplit("[", 1)[-1].rstrip("]"), **result.to_dict(),
             "pass": result.met} for test, result in summary.slos]


def document(vendor: Vendor, *, summary: Summary | None, experiments: Sequence[str],
             backend: Mapping[str, Any], cluster: Mapping[str, Any] | None,
             registrations: Sequence[str], files: Mapping[str, str], started: str,
             finished: str, problems: Sequence[str],
             not_applicable: Mapping[str, str] | None = None,
             under_test: Sequence[str] | None = None,
             stood_in: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The certification document (``certification.yaml``).

    ``files``: role → bundle path of the evidence (summary, junit, allure, ...);
    ``problems``: evidence found missing while packing (each fails the verdict);
    ``summary`` None: summary.json was missing or unreadable (fails the verdict);
    ``not_applicable``: experiment → why it does not apply to the components certified
    (listed as such; ``experiments`` are the ones that apply, each must pass);
    ``under_test``: the kinds certified (None: every kind that ran); ``stood_in``: kind →
    the reference that stood in for it (listed with what ran of it, not certified).
    """
    found = list(problems)
    if summary is None:
        found.append("the run wrote no readable summary.json")
        summary = Summary("FAIL", -1, "", "", 0.0, (), {})
    suites = suite_verdicts(summary)
    experiment_rows = experiment_verdicts(summary, experiments, not_applicable)
    slos = slo_verdicts(summary)
    asked = {n.test: n.reason for n in summary.not_judged if n.asked}
    # the run's own exit rule: a PARTIAL whose every gap was asked (an opt-in experiment, a
    # stood-in kind's suite) is no problem of itself; each gap is listed under not_certified,
    # and every experiment and suite that applies must still pass by its own row below
    if summary.outcomes and exit_code(summary.verdict, summary.not_judged) != ExitCode.PASS:
        found.append(f"the run's verdict (summary.json) is {summary.verdict}")
    found += [f"suite {name}: {s['verdict']}" for name, s in suites.items()
              if s["verdict"] not in ("PASS", NOT_APPLICABLE)]
    found += [f"chaos experiment {name}: {e['verdict']} ({e['outcome']})"
              for name, e in experiment_rows.items() if e["verdict"] not in ("PASS", NOT_APPLICABLE)]
    found += [f"SLO {r['name']} of {r['experiment']}: {r['status']}" for r in slos if not r["pass"]]
    if cluster is None:
        found.append("the cluster's versions were not measured (evidence/cluster.json missing)")
    versions = dict(summary.versions)
    ran = dict(versions.pop("components", {}))
    components = {k: v for k, v in ran.items() if under_test is None or k in under_test}
    stand_ins = {kind: {"reference": what, **(ran.get(kind) or {})}
                 for kind, what in (stood_in or {}).items()}
    return {
        "apiVersion": API_VERSION, "kind": KIND,
        "verdict": "FAIL" if found else "PASS",
        "vendor": dataclasses.asdict(vendor),
        "certified": {"started": started, "finished": finished,
                      "run_started": summary.started, "run_finished": summary.finished,
                      "run_duration_s": summary.duration_s},
        "zoneproof": {"version": versions.get("zoneproof"), "pins": dataclasses.asdict(PINS),
                      "python": versions.get("python", {}), "binaries": versions.get("binaries", {})},
        "backend": {**backend, "cluster": cluster if cluster is not None else "not measured"},
        "components": components,
        "stood_in": stand_ins,
        "registrations": list(registrations),
        "suites": suites,
        "self_check": summary.self_check,
        "not_certified": {**NOT_CERTIFIED, **asked},
        "experiments": experiment_rows,
        "slos": slos,
        "problems": found,
        "files": dict(files),
    }


def predicate(certification: Mapping[str, Any]) -> dict[str, Any]:
    """What the attestation attests: the verdicts, who and what (the rest is in the files)."""
    keys = ("verdict", "vendor", "certified", "suites", "self_check", "experiments", "slos",
            "problems")
    ran = {kind: [{k: entry.get(k) for k in ("component", "executable", "sha256", "url")
                   if entry.get(k)} for entry in section.get("ran", [])]
           for kind, section in certification["components"].items() if isinstance(section, dict)}
    stood_in = {kind: section.get("reference")
                for kind, section in certification.get("stood_in", {}).items()}
    return {**{k: certification[k] for k in keys}, "zoneproof": certification["zoneproof"]["version"],
            "backend": certification["backend"].get("name"), "components": ran,
            "stood_in": stood_in}


def to_yaml(certification: Mapping[str, Any]) -> bytes:
    """The document as YAML (keys in the document's order)."""
    return yaml.safe_dump(dict(certification), sort_keys=False, allow_unicode=True,
                          width=100).encode()
