"""``zoneproof certify PROFILE --key KEY`` and ``zoneproof verify BUNDLE --key PUB``.

certify runs the whole qualification (``qualify.execute``: the conformance suites and every
chaos experiment; with ``self_check`` the broken twins too) against exactly the profile's
components on its backend — a kind the profile does not name is the reference's, standing
in: its conformance suite is left out, and the bundle names it apart from the components
certified — then packs the evidence into a signed bundle (``report.bundle``):
certification.yaml (which also says what a certification does not run, and whether the
self-check ran), summary.json, junit.xml, the allure HTML report, each experiment's journal,
timeline, fault records and plots, the component logs, the evidence read back from the
cluster (the webhook's registration as stored, the cluster's versions), screenshots of the
report as headless chromium showed it, the profile and SLO file, a SHA-256 manifest and the
in-toto attestation. The signing key is loaded before anything
runs. The exit code is 0 only when the certification PASSes.

verify checks a bundle against the vendor's public key and describes what it attests.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zoneproof import cluster, errors
from zoneproof.chaos import catalog
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.report import attestation, browser, bundle, certification, evidence, page, summary
from zoneproof.slo.verdict import NOT_APPLICABLE, RunVerdict
from zoneproof.suites import qualify
from zoneproof.suites.profile import Profile

__all__ = ["CERTIFICATION", "Certified", "certify", "collect_logs", "contents", "describe",
           "left_out", "look_in_browser", "verify"]

CERTIFICATION = "certification.yaml"
LOGS = "logs"
BROWSER = "browser"
#: Files of a chaos experiment's directory that go into the bundle (never its keys or kubeconfigs).
_CHAOS_FILES = (".json", ".png", ".svg", ".log")
_REQUIRED = {"summary": "summary.json", "junit": "junit.xml",
             "allure": "allure-report/index.html"}
_EXPERIMENT_FILES = ("journal.json", "timeline.json", "faults.json", "timeline.png")


@dataclass(frozen=True, slots=True)
class Certified:
    """A certification run: its exit code, verdict, bundle and report directory."""

    code: int
    verdict: str
    bundle: Path
    reports: Path


def _files(root: Path, under: str, suffixes: tuple[str, ...] | None = None) -> Iterator[Path]:
    base = root / under
    if base.is_dir():
        yield from (p for p in sorted(base.rglob("*"))
                    if p.is_file() and (suffixes is None or p.suffix in suffixes))


def collect_logs(basetemp: Path, reports: Path) -> list[Path]:
    """Copy every ``*.log`` the run's components wrote under pytest's ``basetemp`` into
    ``<reports>/logs/`` (same relative paths); the copies."""
    copied = []
    for log in sorted(basetemp.rglob("*.log")):
        target = reports / LOGS / log.relative_to(basetemp)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, target)
        copied.append(target)
    return copied


def contents(reports: Path, experiments: list[str], *, registration: bool = True
             ) -> tuple[dict[str, Path], list[str]]:
    """(bundle name → file) of a run's evidence, and the evidence found missing (the
    webhook's registration as stored only when a webhook is certified: ``registration``)."""
    found: dict[str, Path] = {}
    for path in [*_files(reports, "allure-report"), *_files(reports, "chaos", _CHAOS_FILES),
                 *_files(reports, LOGS, (".log",)),
                 *_files(reports, evidence.EVIDENCE, (".json", ".png"))]:
        found[path.relative_to(reports).as_posix()] = path
    for name in ("summary.json", "junit.xml", page.PAGE):
        if (reports / name).is_file():
            found[name] = reports / name
    missing = [f"{name} missing" for name in _REQUIRED.values() if name not in found]
    missing += [f"chaos/{e}/{f} missing" for e in experiments for f in _EXPERIMENT_FILES
                if f"chaos/{e}/{f}" not in found]
    if registration and not evidence.registrations(reports):
        missing.append("the webhook's registration as the API server stored it was not read back "
                       f"({evidence.EVIDENCE}/{evidence.REGISTRATION_PREFIX}*.json missing)")
    return found, missing


def look_in_browser(reports: Path, experiments: list[str], progress: Progress) -> list[str]:
    """Look at the allure report and the plots in headless chromium; screenshots and what
    was seen go to ``evidence/browser/``. The problems a person would see (none when there
    is no chromium: that is recorded, with the install command, not judged)."""
    where = reports / evidence.EVIDENCE / BROWSER
    try:
        seen = browser.look(reports, experiments, where)
    except errors.ConfigError as exc:
        note = f"not looked at in a browser: {exc}"
        progress(note)
        where.mkdir(parents=True, exist_ok=True)
        (where / "seen.json").write_text(json.dumps({"looked": False, "reason": note}) + "\n")
        return []
    found = seen.problems(experiments)
    pages = [seen.overview, *seen.experiments.values(), *([seen.plots] if seen.plots else [])]
    (where / "seen.json").write_text(json.dumps({
        "looked": True, "browser": str(browser.chromium()), "problems": found,
        "pages": {p.name: {"url": p.url, "screenshot": p.screenshot.name,
                           "text_chars": len(p.text)} for p in pages},
        "plots_loaded": list(seen.plots_loaded)}, indent=1) + "\n")
    progress(f"looked at the report in chromium: {len(pages)} pages, "
             f"{len(seen.plots_loaded)}/{len(experiments)} plots loaded, {len(found)} problem(s)")
    return found


def _page_with_browser(reports: Path, progress: Progress) -> None:
    """``report.html`` again, now saying whether a browser looked at the report."""
    try:
        page.write(summary.load(reports / "summary.json"), reports,
                   title=f"zoneproof certification run {reports.name}")
    except errors.ConfigError as exc:
        progress(f"report.html not rewritten: {exc}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "component"


def left_out(profile: Profile) -> list[str]:
    """The pytest options that leave out the conformance suites of the stand-ins."""
    return [f"--ignore={suite}" for kind in profile.stand_ins for suite in kind.spec.conformance]


def _stood_in(profile: Profile) -> dict[str, str]:
    """Kind → the reference that stood in for it (not certified)."""
    return {str(kind): profile.components[kind].label() for kind in profile.stand_ins}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def certify(profile: Profile, key: Path, *, output: Path | None = None, workers: int | None = None,
            keep_cluster: bool = False, reports: Path | None = None, thorough: bool = False,
            seed: int | None = None, self_check: bool = False, progress: Progress) -> Certified:
    """Qualify the profile's components, pack and sign the bundle; exit code 0 only on PASS."""
    signer = attestation.load_signer(key)  # a bad key fails now, not after the run
    choice = profile.backend
    backend = cluster.get_backend(choice.name, kubeconfig=choice.kubeconfig,
                                  allow_destructive=choice.allow_destructive,
                                  options=choice.options)
    spec = ClusterSpec(name=choice.cluster_name, etcd_members=backend.traits.default_etcd_members)
    started = _now()
    progress(f"certifying {profile.vendor.product} {profile.vendor.version} "
             f"({profile.vendor.vendor}) on the {choice.name} backend")
    with tempfile.TemporaryDirectory(prefix="zoneproof-certify-") as tmp:
        basetemp = Path(tmp) / "pytest"
        options = qualify.Options(
            keep_cluster=keep_cluster, workers=workers or qualify.default_workers(),
            slo_file=profile.slo_file, html=True,
            allure=True,
            allow_destructive=choice.allow_destructive, reports=reports,
            components=profile.components, thorough=thorough, seed=seed,
            self_check=self_check,
            pytest_args=[*profile.scope.pytest_args(), *left_out(profile),
                         f"--basetemp={basetemp}"])
        run = qualify.execute(backend, spec, options, kubeconfig=choice.kubeconfig,
                              progress=progress)
        if run.verdict == RunVerdict.INTERRUPTED:  # nothing to certify: end as the run did
            raise KeyboardInterrupt("the qualification was interrupted")
        collect_logs(basetemp, run.reports)
    try:
        run_summary: summary.Summary | None = summary.load(run.reports / "summary.json")
    except errors.ConfigError as exc:
        progress(f"summary.json: {exc}")
        run_summary = None
    chaos = qualify.repo_root() / "chaos"
    zones = backend.traits.makes_clusters and backend.traits.zoned_options is not None
    plain = backend.traits.plain_capabilities
    known = backend.traits.makes_clusters
    not_applicable = {**found_not_applicable(run_summary), **catalog.not_applicable(
        chaos, profile.components, zones=zones, capabilities=plain, beds_known=known)}
    experiments = [e for e in catalog.applicable(chaos, profile.components, zones=zones,
                                                 capabilities=plain, beds_known=known)
                   if e not in not_applicable]
    browser_problems = look_in_browser(run.reports, experiments, progress)
    _page_with_browser(run.reports, progress)
    files, problems = contents(run.reports, experiments, registration=any(
        kind.spec.serves for kind in profile.under_test))
    problems += browser_problems
    packed: dict[str, Path | bytes] = {**files, "profile.yaml": profile.source}
    if profile.slo_file is not None:
        packed["slo.yaml"] = profile.slo_file
    cluster_file = run.reports / evidence.EVIDENCE / evidence.CLUSTER
    finished = _now()
    document = certification.document(
        profile.vendor, summary=run_summary, experiments=experiments,
        backend={**choice.to_dict(), "kubeconfig": str(choice.kubeconfig or "")},
        cluster=certification.load_json(cluster_file) if cluster_file.is_file() else None,
        registrations=[p.relative_to(run.reports).as_posix()
                       for p in evidence.registrations(run.reports)],
        files={role: name for role, name in _REQUIRED.items() if name in files},
        started=started.isoformat(), finished=finished.isoformat(), problems=problems,
        not_applicable=not_applicable,
        under_test=[str(kind) for kind in profile.under_test], stood_in=_stood_in(profile))
    if run.code != 0 and document["verdict"] == "PASS":  # the run itself failed (e.g. no report)
        document["problems"].append(f"the qualification exited {run.code}")
        document["verdict"] = "FAIL"
    packed[CERTIFICATION] = certification.to_yaml(document)
    name = f"{_slug(profile.vendor.product)}-{_slug(profile.vendor.version)}-{run.reports.name}"
    target = output or run.reports.parent / f"{name}.certification.tar.gz"
    bundle.write(target, packed, certification.predicate(document), signer,
                 mtime=int(finished.timestamp()))
    progress(f"certification {document['verdict']}: bundle {target} "
             f"({target.stat().st_size / 1e6:.1f} MB, {len(packed) + 2} files)")
    for problem in document["problems"]:
        progress(f"  - {problem}")
    return Certified(0 if document["verdict"] == "PASS" else 1, document["verdict"], target,
                     run.reports)


def found_not_applicable(run: summary.Summary | None) -> dict[str, str]:
    """Experiment → why, for each the run skipped as not applicable to its cluster (a user's
    cluster shows what it takes only at run time: its capabilities, what the agent gives)."""
    if run is None:
        return {}
    return {name: o.message.removeprefix(NOT_APPLICABLE) for o in run.outcomes
            if o.outcome == "skipped" and o.message.startswith(NOT_APPLICABLE)
            and (name := summary.experiment_of(o.nodeid)) is not None}


def verify(path: Path, key: Path) -> bundle.Verified:
    """Verify the bundle at ``path`` with the PEM public ``key``; VerificationError lists
    every problem."""
    return bundle.verify(path, attestation.load_public_key(key))


def describe(path: Path, verified: bundle.Verified) -> list[str]:
    """Lines for the terminal: what a verified bundle attests."""
    attested = verified.predicate
    vendor = attested.get("vendor", {})
    lines = [f"{path}: VERIFIED ({verified.files} files, every digest matches the manifest and "
             f"the attestation signed by key {verified.keyid[:16]}…)",
             f"{vendor.get('vendor')}: {vendor.get('product')} {vendor.get('version')} "
             f"(contact {vendor.get('contact')}); zoneproof {attested.get('zoneproof')} on the "
             f"{attested.get('backend')} backend, certified {attested.get('certified', {}).get('finished')}"]
    lines += [f"  {kind}: certified" for kind in attested.get("components", {})]
    lines += [f"  {kind}: not certified, the {what} stood in"
              for kind, what in attested.get("stood_in", {}).items()]
    lines += [f"  suite {name}: {s['verdict']} {s['counts']}"
              for name, s in attested.get("suites", {}).items()]
    checked = attested.get("self_check") or {}
    ran = f"ran {checked.get('counts')}" if checked.get("ran") else "not run"
    lines.append(f"  self-check (broken twins): {ran}")
    lines += [f"  experiment {name}: {e['verdict']}" for name, e in attested.get("experiments", {}).items()]
    failing = [s for s in attested.get("slos", []) if not s.get("pass")]
    lines.append(f"  SLOs: {len(attested.get('slos', [])) - len(failing)} met, {len(failing)} not")
    lines += [f"  problem: {p}" for p in attested.get("problems", [])]
    lines.append(f"verdict: {verified.verdict}")
    return lines
