"""``certification.yaml`` and the attested result: who, what, when, and the verdicts.

Built from what the run wrote — summary.json (outcomes, SLO results, versions, the
components exactly as they ran), the evidence read back from the cluster — and from the
vendor's profile. The certification passes only if the run passed, every suite passed,
every chaos experiment passed (one skipped or not run fails it) and no evidence is
missing. ``predicate`` is the part the in-toto attestation carries.
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

__all__ = ["API_VERSION", "KIND", "SUITES", "Vendor", "document", "experiment_verdicts",
           "load_json", "predicate", "slo_verdicts", "suite_verdicts", "to_yaml"]

API_VERSION = "zoneproof.dev/v1"
KIND = "Certification"
#: Suite name → the test id prefix of its tests (qualify's SUITES).
SUITES = {"conformance": "conformance/", "chaos": "chaos/", "integration": "tests/integration/"}
_CHAOS_TEST = "chaos/test_experiments.py::test_experiment["
_FAILING = frozenset({"failed", "error"})


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


def suite_verdicts(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Suite → {verdict, counts, failed}: FAIL if a test failed, NOT_RUN if none passed."""
    out: dict[str, dict[str, Any]] = {}
    for suite, prefix in SUITES.items():
        tests = [t for t in summary.get("tests", []) if str(t["test"]).startswith(prefix)]
        counts = Counter(str(t["outcome"]) for t in tests)
        failed = sorted(str(t["test"]) for t in tests if t["outcome"] in _FAILING)
        verdict = "FAIL" if failed else "PASS" if counts["passed"] else "NOT_RUN"
        out[suite] = {"verdict": verdict, "counts": dict(sorted(counts.items())), "failed": failed}
    return out


def experiment_verdicts(summary: Mapping[str, Any], experiments: Sequence[str]
                        ) -> dict[str, dict[str, Any]]:
    """Each chaos experiment → {verdict, outcome, duration_s}; one that did not run is NOT_RUN."""
    ran = {str(t["test"])[len(_CHAOS_TEST):-1]: t for t in summary.get("tests", [])
           if str(t["test"]).startswith(_CHAOS_TEST)}
    out: dict[str, dict[str, Any]] = {}
    for name in experiments:
        test = ran.get(name)
        if test is None:
            out[name] = {"verdict": "NOT_RUN", "outcome": "not collected"}
            continue
        outcome = str(test["outcome"])
        out[name] = {"verdict": "PASS" if outcome == "passed" else
                     "FAIL" if outcome in _FAILING else "NOT_RUN",
                     "outcome": outcome, "duration_s": test.get("duration_s")}
    return out


def slo_verdicts(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each SLO judged: experiment, name, status, observed, threshold, unit, pass."""
    rows = []
    for row in summary.get("slos", []):
        test = str(row["test"])
        rows.append({
            "experiment": test.rsplit("[", 1)[-1].rstrip("]"), "name": row["name"],
            "status": row["status"],
            # summary v1 names them measured/target, v2 observed/threshold
            "observed": row.get("observed", row.get("measured")),
            "threshold": row.get("threshold", row.get("target")),
            "unit": row["unit"], "pass": bool(row["pass"])})
    return rows


def document(vendor: Vendor, *, summary: Mapping[str, Any], experiments: Sequence[str],
             backend: Mapping[str, Any], cluster: Mapping[str, Any] | None,
             registrations: Sequence[str], files: Mapping[str, str], started: str,
             finished: str, problems: Sequence[str]) -> dict[str, Any]:
    """The certification document (``certification.yaml``).

    ``files``: role → bundle path of the evidence (summary, junit, allure, ...);
    ``problems``: evidence found missing while packing (each fails the verdict).
    """
    suites = suite_verdicts(summary)
    experiment_rows = experiment_verdicts(summary, experiments)
    slos = slo_verdicts(summary)
    found = list(problems)
    if summary.get("verdict") != "PASS":
        found.append(f"the run's verdict (summary.json) is {summary.get('verdict', 'missing')}")
    found += [f"suite {name}: {s['verdict']}" for name, s in suites.items() if s["verdict"] != "PASS"]
    found += [f"chaos experiment {name}: {e['verdict']} ({e['outcome']})"
              for name, e in experiment_rows.items() if e["verdict"] != "PASS"]
    found += [f"SLO {r['name']} of {r['experiment']}: {r['status']}" for r in slos if not r["pass"]]
    if cluster is None:
        found.append("the cluster's versions were not measured (evidence/cluster.json missing)")
    versions = dict(summary.get("versions", {}))
    components = dict(versions.pop("components", {}))
    return {
        "apiVersion": API_VERSION, "kind": KIND,
        "verdict": "FAIL" if found else "PASS",
        "vendor": dataclasses.asdict(vendor),
        "certified": {"started": started, "finished": finished,
                      "run_started": summary.get("started"), "run_finished": summary.get("finished"),
                      "run_duration_s": summary.get("duration_s")},
        "zoneproof": {"version": versions.get("zoneproof"), "pins": dataclasses.asdict(PINS),
                      "python": versions.get("python", {}), "binaries": versions.get("binaries", {})},
        "backend": {**backend, "cluster": cluster if cluster is not None else "not measured"},
        "components": components,
        "registrations": list(registrations),
        "suites": suites,
        "experiments": experiment_rows,
        "slos": slos,
        "problems": found,
        "files": dict(files),
    }


def predicate(certification: Mapping[str, Any]) -> dict[str, Any]:
    """What the attestation attests: the verdicts, who and what (the rest is in the files)."""
    keys = ("verdict", "vendor", "certified", "suites", "experiments", "slos", "problems")
    ran = {kind: [{k: entry.get(k) for k in ("component", "executable", "sha256", "url")
                   if entry.get(k)} for entry in section.get("ran", [])]
           for kind, section in certification["components"].items() if isinstance(section, dict)}
    return {**{k: certification[k] for k in keys}, "zoneproof": certification["zoneproof"]["version"],
            "backend": certification["backend"].get("name"), "components": ran}


def to_yaml(certification: Mapping[str, Any]) -> bytes:
    """The document as YAML (keys in the document's order)."""
    return yaml.safe_dump(dict(certification), sort_keys=False, allow_unicode=True,
                          width=100).encode()
