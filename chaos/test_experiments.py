"""Every experiment in chaos/*.yaml, run in-process by chaoslib against its worker's bed.

The run passes only on the strict verdict (``slo.judge``, judged once by the zoneproof
control and read from the journal: not interrupted, completed, steady state met
before and after, every activity and rollback succeeded, every declared SLO PASS) and
with nothing left behind when the zoneproof control closed the run. SLO figures go to
the JUnit properties (and so to summary.json); the journal, timeline and its plots go to
``<--zp-report-dir>/chaos/<experiment>/`` (else the test's tmp dir) and to allure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import allure
import pytest
from chaoslib.experiment import ensure_experiment_is_valid, run_experiment
from chaoslib.loader import load_experiment
from zoneproof_fixtures.settings import Settings

from zoneproof.chaos import control
from zoneproof.cluster import backend_type
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness.component import Component, Components
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.report import artefacts, junit, summary
from zoneproof.report import journal as journal_
from zoneproof.slo import SloResult, SloSet, SloStatus, Verdict, load_slos
from zoneproof.slo.verdict import not_applicable

#: No xdist group: each test runs on its worker's bed (``worker_bed``, restored after each
#: test), so the experiments spread over the workers' beds; those on zoned beds share their
#: bed's group (chaos/conftest.py).
pytestmark = [pytest.mark.destructive, pytest.mark.expected_seconds(30)]
#: The runs that must fail prove the experiments' sensitivity, a property of zoneproof: they
#: are its self-check (``make test``; the gate with ``--self-check``), not the gate's judges.
SELF_CHECK = getattr(pytest.mark, summary.SELF_CHECK)
ROLLBACKS_ALWAYS = {"runtime": {"rollbacks": {"strategy": "always"}}}
EXPERIMENTS = [pytest.param(p, id=p.stem) for p in sorted(Path(__file__).parent.glob("*.yaml"))]


def _overrides(bed: Cluster, webhook: Component, controller: ControllerSettings, workdir: Path,
               slos: SloSet) -> dict[str, Any]:
    """Configuration that points an experiment at ``bed``, the components under test and
    the run's SLO file (configuration is data: the file, not the loaded SloSet)."""
    # a user's cluster (existing backend) is found by its kubeconfig, destructive if allowed
    adopted = ({"zoneproof_kubeconfig": str(bed.kubeconfig),
                "zoneproof_allow_destructive": str(Capability.DESTRUCTIVE in bed.capabilities)}
               if backend_type(bed.backend).traits.needs_kubeconfig else {})
    return {**adopted, "zoneproof_backend": bed.backend, "zoneproof_cluster": bed.name,
            "zoneproof_slo_file": str(slos.source or ""), "zoneproof_workdir": str(workdir),
            "zoneproof_components": Components(webhook, controller.component).to_dict(),
            "zoneproof_selector": controller.selector,
            "zoneproof_lease": f"{controller.lease_namespace}/{controller.lease_name}"}


def _attach(journal_path: Path, recorded: dict[str, Any]) -> None:
    allure.attach.file(str(journal_path), name="chaostoolkit journal",
                       attachment_type=allure.attachment_type.JSON)
    kinds = {".png": allure.attachment_type.PNG, ".svg": allure.attachment_type.SVG,
             ".json": allure.attachment_type.JSON, ".html": allure.attachment_type.HTML}
    for plot in map(Path, recorded.get("plots", [])):
        allure.attach.file(str(plot), name=f"timeline{plot.suffix}", attachment_type=kinds[plot.suffix])
    for path in map(Path, recorded.get("artefacts", [])):  # history, porcupine's verdict, HTML
        name = path.name if path.suffix == ".json" else f"porcupine: key {path.stem}"
        allure.attach.file(str(path), name=name, attachment_type=kinds[path.suffix])


@dataclass(frozen=True, slots=True)
class ExperimentResult:
    """One experiment run: its journal (saved), SLO results and strict verdict."""

    journal_path: Path
    results: list[SloResult]
    verdict: Verdict
    problems: list[str]
    unfenced: list[str]

    def explain(self) -> str:
        """The verdict's findings, rogue deletes and leftovers: what a failing test says."""
        rogue = "".join(f"\n  {line}" for line in self.unfenced)
        return (f"{self.verdict.summary()}{rogue}\nleft behind: {self.problems}\njournal: "
                f"{self.journal_path}")


def _with_arguments(experiment: dict[str, Any], arguments: Mapping[str, Mapping[str, Any]]
                    ) -> dict[str, Any]:
    """A copy of ``experiment`` whose method activities named in ``arguments`` take those
    arguments (over their own)."""
    changed = copy.deepcopy(experiment)
    for activity in changed["method"]:
        if activity.get("name") in arguments:
            activity["provider"].setdefault("arguments", {}).update(arguments[activity["name"]])
    missing = set(arguments) - {a.get("name") for a in changed["method"]}
    assert not missing, f"no such method activities: {sorted(missing)}"
    return changed


def _load(name: str) -> dict[str, Any]:
    experiment: dict[str, Any] = load_experiment(str(Path(__file__).parent / f"{name}.yaml"))
    return experiment


def _run(path: Path | dict[str, Any], bed: Cluster, *, webhook: Component,
         controller: ControllerSettings, workdir: Path, slos: SloSet,
         record_property: Callable[[str, object], None]) -> ExperimentResult:
    """Run one experiment (a file, or one given as data) in-process with the zoneproof
    control; record its SLOs."""
    experiment = load_experiment(str(path)) if isinstance(path, Path) else path
    ensure_experiment_is_valid(experiment)
    control.check_faults(experiment)
    # set, not passed as experiment_vars: chaoslib drops vars the experiment does not declare
    experiment.setdefault("configuration", {}).update(
        _overrides(bed, webhook, controller, workdir, slos))
    # rollbacks run whatever happened (chaoslib's default skips them when the hypothesis fails)
    journal: dict[str, Any] = run_experiment(experiment, settings=ROLLBACKS_ALWAYS)
    journal_path = artefacts.save_journal(workdir, journal)
    assert journal_.JOURNAL_KEY in journal, "the zoneproof control did not record this run"
    results = journal_.slo_results(journal)
    checks = journal_.effect_checks(journal)
    print("\n".join([c.message for c in checks] + [r.message for r in results]))
    recorded = journal[journal_.JOURNAL_KEY]
    _attach(journal_path, recorded)
    verdict = journal_.verdict(journal)  # judged once, by the control
    if verdict.interrupted:  # chaoslib swallowed the signal: this test is cut, the run ends
        received = (recorded.get("interrupted_by") or "a signal")
        record_property(junit.INTERRUPTED_PROPERTY, received)
        pytest.fail(f"interrupted by {received}: {verdict.summary()}\njournal: {journal_path}")
    return ExperimentResult(journal_path, results, verdict,
                   list(recorded.get("problems", [])), list(recorded.get("unfenced_deletes", [])))


#: Runs of an experiment while its verdict finds nothing but VOID SLOs (its history's traffic
#: ran under its minimum rate: the bed's cores were shared) and nothing is left behind: a VOID
#: judges nothing, so the bed is restored and the experiment runs again; the last run's
#: verdict stands (a VOID one fails). Each void run is recorded (``junit.VOID_RUN_PROPERTY``,
#: summary.json's ``void_runs``) and keeps its artefacts; run N > 1 writes to ``<workdir>/run-N``.
RUNS_WHILE_VOID = 2


def _judged(path: Path | dict[str, Any], bed: Cluster, *, settings: Settings, slos: SloSet,
            workdir: Path, restore: Callable[[], None],
            record_property: Callable[[str, object], None]) -> ExperimentResult:
    """Run an experiment up to RUNS_WHILE_VOID times (see there); the last run, its SLOs
    recorded."""
    for number in range(1, RUNS_WHILE_VOID + 1):
        where = workdir if number == 1 else workdir / f"run-{number}"
        where.mkdir(parents=True, exist_ok=True)
        run = _run(path, bed, webhook=settings.components.webhook, controller=settings.controller,
                   workdir=where, slos=slos, record_property=record_property)
        if number == RUNS_WHILE_VOID or not run.verdict.only_void or run.problems:
            break
        record_property(*junit.void_run_property(number, run.verdict.summary(),
                                                  str(run.journal_path)))
        print(f"run {number} judged nothing ({run.verdict.summary()}): the bed is restored and "
              f"the experiment runs again")
        restore()
    for result in run.results:
        record_property(*junit.slo_property(result))
    return run


@pytest.mark.parametrize("path", EXPERIMENTS)
def test_experiment(path: Path, experiment_bed: Cluster, zp_settings: Settings,  # noqa: PLR0917
                    experiment_workdir: Path, restore: Callable[[], None],
                    record_property: Callable[[str, object], None]) -> None:
    run = _judged(path, experiment_bed, settings=zp_settings, slos=zp_settings.slos,
                  workdir=experiment_workdir, restore=restore, record_property=record_property)
    assert run.verdict.passed and not run.problems, f"{path.name}: {run.explain()}"


@SELF_CHECK
def test_a_void_history_runs_the_experiment_again_and_never_passes(
        worker_bed: Cluster, zp_settings: Settings, tmp_path: Path,
        restore: Callable[[], None]) -> None:
    """apiserver-restart whose one history client must hold 1,000 ops/s (no client of one
    thread does): every run is VOID; it runs twice, the void run recorded, and fails."""
    starved = _with_arguments(_load("apiserver-restart"), {"start-history-traffic": {
        "clients": 1, "rate_ops_s": 1000.0, "min_rate_ops_s": 1000.0, "ready_within_s": 1}})
    recorded: list[tuple[str, object]] = []
    run = _judged(starved, worker_bed, settings=zp_settings, slos=load_slos(), workdir=tmp_path,
                  restore=restore, record_property=lambda *p: recorded.append(p))
    assert not run.verdict.passed and run.verdict.only_void, run.explain()
    assert "ops/s" in run.verdict.summary(), "the VOID names the rate the traffic reached"
    voids = junit.void_runs(recorded)
    assert [v["run"] for v in voids] == [1] and Path(str(voids[0]["journal"])).is_file()
    assert (tmp_path / "run-2").is_dir() and run.journal_path.parent == tmp_path / "run-2"
    slos = junit.slo_results(recorded)
    assert [r.status for r in slos if r.name == "history-linearizable"] == [SloStatus.VOID]
    assert not run.problems, f"rollback/cleanup failed: {run.problems}"


class Twin(NamedTuple):
    """An experiment run against a broken controller variant, and the SLO that must catch it
    (``alone``: no other SLO may), with ``arguments`` over its method activities' (which may
    break the deployment instead: the ``reference`` controller, its webhook placed badly)."""

    experiment: str
    variant: str
    slo: str
    arguments: Mapping[str, Mapping[str, Any]] = {}
    alone: bool = False


#: Waits a twin cuts short: they end after its breach is certain (their length judges nothing
#: in the twin; the SLO is figured from the timeline, not from them).
#: graceful-delete: its pods stay Terminating on zone-a's dead nodes until the zone returns
#: (only a live kubelet confirms a graceful delete), so nothing is Ready elsewhere before
#: zone-a-back. A 30 s wait begun after the fault outlasts the SLO's 30 s from injection
#: (workloads-ready); workloads-running cannot be met before the zone returns either.
GRACEFUL_DELETE_BREACHED = {"workloads-ready-in-surviving-zones": {"timeout_s": 30},
                            "workloads-running": {"timeout_s": 1}}
#: no-leader-election takes no Lease at all (variants.py): the waits for a leader can only
#: time out, and its replicas are started (acting on their own) before the first wait.
NO_LEADER_EVER = {"deploy-ha-controller": {"timeout_s": 2}, "new-leader": {"timeout_s": 2}}

CAUGHT = [
    pytest.param(Twin("zone-outage", "graceful-delete", "statefulset-pod-ready-elsewhere",
                      GRACEFUL_DELETE_BREACHED), id="zone-outage-graceful-delete"),
    pytest.param(Twin("ha-controller-leader-sigkill", "no-leader-election", "concurrent-actors",
                      NO_LEADER_EVER), id="leader-sigkill-no-leader-election"),
    # one replica: nobody takes the unrenewed Lease over, so only the Lease model's windows
    # of ability (renewals + leaseDuration) see it act on an expired Lease
    pytest.param(Twin("kubelet-stop-one-node", "acts-on-expired-lease", "lease-fenced-actions",
                      {"deploy-ha-controller": {"replicas": 1}}, alone=True),
                 id="kubelet-stop-acts-on-expired-lease"),
    # in-cluster only (chaos/conftest.py skips them otherwise): the leader's zone goes down
    pytest.param(Twin("zone-outage-components", "no-leader-election", "concurrent-actors"),
                 id="components-zone-no-leader-election"),
    # the reference controller; the webhook's one replica placed in the leader's zone
    pytest.param(Twin("zone-outage-components", "reference", "components-zone-admissions",
                      {"deploy-webhook": {"replicas": 1, "zone": "controller-leader"}}),
                 id="components-zone-one-webhook-replica"),
    # in-cluster only: the reference webhook stopping at once on SIGTERM, without its drain.
    # Measured on kind (4 streams): 2 rounds in 3 fail an admission (1 in 2 with one stream),
    # so 8 rounds miss it with a chance of about 1 in 6,500
    pytest.param(Twin("webhook-rollout", "reference", "failed-admissions",
                      {"deploy-webhook": {"replicas": 2, "args": ["--shutdown-delay=0"]},
                       "restart-webhook": {"rounds": 8}}),
                 id="webhook-rollout-no-drain"),
    # zones as failure domains (tag zones: a zoned bed). A client pinned to one zone's API
    # server, not the load balancer: its writes fail until that zone is back
    pytest.param(Twin("zone-outage-full", "reference", "zone-api-write-error-window",
                      {"start-writer": {"zone": "zone-a"}}),
                 id="zone-outage-full-writer-pinned-to-the-dead-zone"),
    pytest.param(Twin("zone-partition", "reference", "zone-api-write-error-window",
                      {"start-writer": {"zone": "zone-a"}}),
                 id="zone-partition-writer-pinned-to-the-isolated-zone"),
    # the writer pinned to a zone still down when zone-b returns: no write until zone-c is back
    pytest.param(Twin("two-zones-down", "reference", "quorum-recovery",
                      {"start-writer": {"zone": "zone-c"}}),
                 id="two-zones-down-writer-pinned-to-a-zone-still-down"),
    # kind only (the cluster DNS down meanwhile): the same graceful deletes, the same breach
    pytest.param(Twin("dns-outage", "graceful-delete", "statefulset-pod-ready-elsewhere",
                      GRACEFUL_DELETE_BREACHED), id="dns-outage-graceful-delete"),
    # graceful deletes of pods whose node is merely unreachable: they stay Terminating
    pytest.param(Twin("kubelet-apiserver-cut", "graceful-delete", "statefulset-pod-ready-elsewhere",
                      {"workloads-ready-in-other-zones": {"timeout_s": 30}}),
                 id="kubelet-apiserver-cut-graceful-delete"),
    # the cut turns the nodes Unknown (kcm hears nothing), never False: nothing is deleted
    pytest.param(Twin("kubelet-apiserver-cut", "ignores-unknown", "ha-controller-force-delete",
                      {"workloads-ready-in-other-zones": {"timeout_s": 30}}),
                 id="kubelet-apiserver-cut-ignores-unknown"),
    # the stated bound raised past where writes keep their p99 (a leader across slow links)
    pytest.param(Twin("zone-latency", "reference", "zone-latency-write-p99",
                      {"add-50ms": {"parameters": {"zone": "zone-a", "latency_ms": 800}},
                       "probe-latency-limits": {"levels_ms": [100], "hold_s": 2}}),
                 id="zone-latency-bound-past-the-limit"),
]


#: SLOs judged from the API server's audit log (who deleted what): no figure without one.
_AUDITED = frozenset({"concurrent-actors", "lease-fenced-actions"})


@SELF_CHECK
@pytest.mark.parametrize("case", CAUGHT)
def test_experiment_catches_a_broken_controller(
        case: Twin, experiment_bed: Cluster, zp_settings: Settings, tmp_path: Path) -> None:
    """The same experiment fails, naming the breached SLO, when the controller under test
    is started as its broken variant (conftest skips this when its source has no such
    variant)."""
    if case.slo in _AUDITED and experiment_bed.audit_log() is None:
        pytest.skip(not_applicable(
            f"{case.slo} is judged from the API server's audit log, which the "
            f"{experiment_bed.backend} cluster {experiment_bed.name} does not let zoneproof read"))
    broken = zp_settings.controller.with_component(
        zp_settings.controller.component.with_variant(case.variant))
    run = _run(_with_arguments(_load(case.experiment), case.arguments), experiment_bed,
               webhook=zp_settings.components.webhook, controller=broken, workdir=tmp_path,
               slos=load_slos(), record_property=lambda *_: None)
    assert not run.verdict.passed, f"{case.experiment} passed against the {case.variant} controller"
    breached = {r.name: r for r in run.results if r.status is not SloStatus.PASS}
    assert case.slo in breached, f"{case.slo} did not catch {case.variant}: {run.explain()}"
    if case.alone:
        assert set(breached) == {case.slo}, f"not {case.slo} alone: {run.explain()}"
    assert case.slo in run.verdict.summary(), "the verdict names the breached SLO"
    assert not run.problems, f"rollback/cleanup failed: {run.problems}"


@SELF_CHECK
@pytest.mark.parametrize("case", [pytest.param(("apiserver-restart", "informer"),
                                               id="apiserver-restart-informer-reads")])
def test_informer_reads_are_judged_non_linearizable(
        case: tuple[str, str], worker_bed: Cluster, zp_settings: Settings, tmp_path: Path) -> None:
    """The apiserver-restart experiment with the traffic's reads from a client-side informer
    cache (stale while its watch is cut) fails on history-linearizable alone, naming the
    operations, while its quorum-read original passes (test_experiment)."""
    experiment, mode = case
    twin = _with_arguments(_load(experiment),
                           {"start-history-traffic": {"read_mode": mode}})
    run = _run(twin, worker_bed, webhook=zp_settings.components.webhook,
               controller=zp_settings.controller, workdir=tmp_path, slos=load_slos(),
               record_property=lambda *_: None)
    assert {(f.kind, f.subject) for f in run.verdict.findings} == {
        ("slo-not-met", "history-linearizable")}, run.explain()
    (result,) = [r for r in run.results if r.name == "history-linearizable"]
    assert result.status is SloStatus.FAIL and "none of the next fits" in result.message
    assert not run.problems, f"rollback/cleanup failed: {run.problems}"


def _provider(module: str, func: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "python", "module": f"zoneproof.chaos.{module}", "func": func,
            "arguments": arguments}


#: A misconfigured experiment (krkn#1394's "exits 0, nothing happened"): the kubelet is
#: stopped for 1 s, far less than the node-monitor grace period, so no node ever turns
#: NotReady. chaostoolkit calls it completed, the steady state holds, no SLO is declared.
INEFFECTIVE = {
    "version": "1.0.0", "title": "A kubelet stopped for 1 s", "description": "misconfigured",
    "tags": ["zoneproof"], "configuration": {"zoneproof_slos": []},
    "controls": [{"name": "zoneproof", "provider": {"type": "python",
                                                    "module": "zoneproof.chaos.control"}}],
    "steady-state-hypothesis": {"title": "every node Ready", "probes": [
        {"type": "probe", "name": "all-nodes-ready", "tolerance": True,
         "provider": _provider("probes", "nodes_ready")}]},
    "method": [{"type": "action", "name": "stop-a-kubelet-for-a-second",
                "provider": _provider("actions", "inject_fault", fault="stop-kubelets",
                                      parameters={"count": 1, "zones": ["zone-a"]},
                                      max_duration_s=1),
                "pauses": {"after": 3}}],
    "rollbacks": [{"type": "action", "name": "revert-every-fault",
                   "provider": _provider("actions", "revert_faults")}],
}


@SELF_CHECK
def test_a_fault_that_did_not_take_effect_fails(worker_bed: Cluster, zp_settings: Settings,
                                                 tmp_path: Path) -> None:
    """Only the effect check catches a fault that never took effect: everything else holds."""
    run = _run(copy.deepcopy(INEFFECTIVE), worker_bed, webhook=zp_settings.components.webhook,
               controller=zp_settings.controller, workdir=tmp_path, slos=load_slos(),
               record_property=lambda *_: None)
    assert not run.verdict.passed, "a fault that never took effect passed"
    assert {f.kind for f in run.verdict.findings} == {"fault-not-effective"}, run.explain()
    assert "nodes-not-ready of stop-kubelets" in run.verdict.summary()
    assert not run.problems, f"rollback/cleanup failed: {run.problems}"
