"""The generated webhook suite: inputs drawn by hypothesis, judged by the executable spec.

Worlds (namespaces with annotations and HPAs) are made in the cluster the webhook reads
and reused by many inputs; each input is posted to the webhook under test directly and a
sample goes through the real API server with its registration; the worlds are edited
(annotations, HPAs) between phases and, on a private bed, the Node count crosses 1 (the
companion controller's re-patches judged too); generated cases whose facts change
between steps run through the API server. A failure shows the shrunk input, the field
that differs and its spec section, the seed that replays the run (``--zp-seed``) and a
case file that replays the input alone. ``--zp-thorough`` draws ten times more.
(``zoneproof.conformance.ha_config.generated``; README "Generated inputs".)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import allure
import pytest
from hypothesis import strategies as st
from kubernetes import client

from zoneproof._util import kube
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness import webhook as webhooks
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.source import IN_CLUSTER
from zoneproof.conformance.ha_config import cases, direct, generated, generators, live, model, worlds
from zoneproof.specs.ha_config import configuration

pytestmark = pytest.mark.cluster
PRIVATE_GROUP = "ha-config-generated-bed"
_Defaults = configuration.TolerationDefaults
SETTINGS = (_Defaults(60, 120), _Defaults(0, 0), _Defaults(None, 300), _Defaults(1, None),
            _Defaults(0, 86400))
"""Toleration settings the private bed's webhook runs with (one per run, from the seed; the
shared webhook runs with none): 0, unset, equal and different values (§2, §9)."""


@pytest.fixture(scope="session")
def budget(zp_settings: Any) -> generated.Budget:
    """How many inputs (``--zp-thorough``: the nightly budget)."""
    return generated.BUDGETS["thorough" if zp_settings.thorough else "default"]


@dataclass
class Run:
    """What one generated test reports: its seed, its phases, where failing inputs are written."""

    seed: int
    cases_dir: Path
    report: generated.Report

    @property
    def replay(self) -> str:
        """How to draw the same inputs again."""
        return f"--zp-seed={self.seed} (same component and options; pytest prints the seed in its header)"


@pytest.fixture
def run(zp_seed: int, report_dir: Path | None, tmp_path: Path,
        record_property: Callable[[str, object], None]) -> Iterator[Run]:
    """The test's seed and report; afterwards its phases and failures are reported and judged."""
    record_property("seed", zp_seed)
    directory = (report_dir / "generated-cases") if report_dir is not None else tmp_path / "generated-cases"
    current = Run(zp_seed, directory, generated.Report(zp_seed))
    yield current
    report = current.report
    for index, phase in enumerate(report.phases):
        record_property(f"phase{index}", f"{phase.name}: {phase.examples} inputs, {phase.requests} requests, "
                        f"{phase.seconds:.1f} s, {phase.per_minute:.0f}/min")
    allure.attach("\n".join([f"seed {report.seed}", *report.lines()]), name="generated inputs",
                  attachment_type=allure.attachment_type.TEXT)
    for phase in report.phases:
        if phase.failure is not None and phase.failure.case_file is not None:
            allure.attach.file(str(phase.failure.case_file), name=f"case {phase.failure.case_file.name}",
                               attachment_type=allure.attachment_type.YAML)
    if report.failures:
        pytest.fail("\n".join([f"seed {report.seed} (replay: {current.replay})", *report.lines(), "",
                               "\n\n".join(report.failures)]), pytrace=False)


def _designs(seed: int, count: int) -> list[worlds.Design]:
    drawn = generators.sample(st.composite(generators.draw_world)(), count, seed)
    return [worlds.Design(dict(ns.labels), dict(ns.annotations), hpas) for ns, hpas in drawn]


def _edits(seed: int, current: list[model.Facts]) -> list[worlds.Edit]:
    def draw(draw_: st.DrawFn) -> list[worlds.Edit]:
        return [worlds.Edit(*generators.draw_world_edit(draw_, facts)) for facts in current]

    return generators.sample(st.composite(draw)(), 2, seed)[-1]  # the first drawn is the simplest


@dataclass(frozen=True)
class Target:
    """Where inputs go: straight to the webhook (``send``), and through the API server (``api``)."""

    send: direct.Send
    api: client.ApiClient


def _phases(run: Run, where: str, target: Target, facts: list[model.Facts], *, examples: int,
            api_examples: int, seed: int) -> None:
    """Posted, then through the API server; only the run's first failure is shrunk."""
    run.report.phases.append(generated.direct_posts(
        target.send, facts, phase=f"{where}: posted to the webhook", examples=examples, run_seed=seed,
        replay=run.replay, cases_dir=run.cases_dir, shrink=not run.report.failures))
    run.report.phases.append(generated.api_server(
        target.api, facts, phase=f"{where}: through the API server", examples=api_examples, run_seed=seed,
        replay=run.replay, cases_dir=run.cases_dir, shrink=not run.report.failures))


@pytest.mark.expected_seconds(12)
def test_generated_requests_on_the_shared_cluster(
        shared_api: client.ApiClient, shared_node_count: int, shared_poster: direct.Poster,
        budget: generated.Budget, run: Run) -> None:
    """Worlds made and then edited on the run's cluster (several Nodes, no toleration defaults)."""
    if shared_node_count < 2:
        pytest.skip(f"the shared cluster has {shared_node_count} Node(s); the private-bed test covers one")
    made = worlds.Worlds(shared_api, live.review_post(shared_poster), configuration.TolerationDefaults())
    target = Target(shared_poster, shared_api)
    try:
        made.create(_designs(run.seed, budget.worlds))
        _phases(run, "shared cluster, first facts", target, made.facts(), examples=budget.examples,
                api_examples=budget.api_examples, seed=run.seed)
        for edit in range(1, budget.edits + 1):
            made.edit(_edits(run.seed + edit, made.current()))
            _phases(run, f"shared cluster, facts edited ({edit})", target, made.facts(),
                    examples=budget.examples // 2, api_examples=budget.api_examples, seed=run.seed + edit)
    finally:
        run.report.unreflected += made.unreflected
        made.delete()


def test_generated_cases_on_the_shared_cluster(shared_api: client.ApiClient, shared_node_count: int,
                                              budget: generated.Budget, run: Run) -> None:
    """Generated cases through the API server: UPDATEs while annotations and HPAs change."""
    if shared_node_count < 2:
        pytest.skip(f"the shared cluster has {shared_node_count} Node(s)")
    cases = generated.scenario_cases(run.seed, budget.scenarios, node_steps=False)
    run.report.phases.append(generated.run_cases(
        cases, lambda case: live.run_case(shared_api, case), phase=f"shared cluster, {len(cases)} generated "
        "cases (annotations and HPAs changing between steps)", replay=run.replay, cases_dir=run.cases_dir))


@pytest.fixture(scope="module")
def generated_bed(module_private_bed: Callable[..., Cluster]) -> Cluster:
    """A private bed of one Node (one etcd member): runs set the Node count."""
    return module_private_bed(zones=("zone-a",), nodes_per_zone=1, etcd_members=1)


@pytest.mark.xdist_group(PRIVATE_GROUP)
@pytest.mark.expected_seconds(40)
def test_generated_requests_while_the_nodes_change(
        request: pytest.FixtureRequest, webhook_component: Component, tmp_path: Path,
        budget: generated.Budget, run: Run) -> None:
    """On a private bed: one Node, then three, then one; the webhook with toleration defaults;
    the companion controller's re-patches judged as §11 says; generated cases with Node steps."""
    if webhook_component.external:
        pytest.skip("--zp-webhook-url: an external webhook reads its own cluster, not the private bed "
                    "this test needs; use --zp-webhook-command")
    if webhook_component.mode == IN_CLUSTER:
        pytest.skip("the test starts the webhook with toleration settings (command-line arguments) on a "
                    "1-Node bed: run it with --zp-components host")
    bed: Cluster = request.getfixturevalue("generated_bed")
    api = kube.api_client(bed.kubeconfig)
    nodes = live.NodeSet(api)
    if nodes.own() > 1:
        api.close()
        pytest.skip(f"the test needs 1 Node; this {bed.backend} bed has {nodes.own()} of its own")
    nodes.set_count(1)
    settings = random.Random(run.seed).choice(SETTINGS)
    running = webhooks.RunningWebhook(bed, webhook_component, tmp_path / "webhook",
                                      extra_args=live.settings_args(settings)).start()
    poster = direct.Poster(running.url, running.ca_bundle)
    made = worlds.Worlds(api, live.review_post(poster), settings, prefix="hacn")
    target = Target(poster, api)
    try:
        made.create(_designs(run.seed + 100, max(2, budget.worlds // 2)))
        _phases(run, f"private bed, 1 Node, {settings}", target, made.facts(), examples=budget.examples // 2,
                api_examples=budget.api_examples, seed=run.seed + 100)
        stored = generated.store(api, made.facts(), count=3 * len(made.facts()), run_seed=run.seed + 101)
        made.edit(_edits(run.seed + 102, made.current()))  # stored objects now disagree with their namespace
        for count, seed in ((3, 103), (1, 104)):
            expected = generated.companion_expected(api, made.facts(), stored, count)
            made.set_nodes(nodes, count)
            run.report.phases.append(generated.companion_phase(
                api, expected, name=f"private bed, companion at {count} Node(s)",
                what=f"the Node count became {count}"))
            _phases(run, f"private bed, {count} Node(s)", target, made.facts(), examples=budget.examples // 4,
                    api_examples=budget.api_examples // 2, seed=run.seed + seed)
        # §11: the first reconcile after start acts (three Nodes set while the webhook is down)
        expected = generated.companion_expected(api, made.facts(), stored, 3)
        running.restart(lambda: nodes.set_count(3))
        made.refresh()
        run.report.phases.append(generated.companion_phase(
            api, expected, name="private bed, companion after a restart at 3 Nodes",
            what="the webhook restarted while the Node count became 3"))
        cases = generated.scenario_cases(run.seed + 105, budget.scenarios, node_steps=True, settings=settings)
        run.report.phases.append(generated.run_cases(
            cases, lambda case: _on_bed(api, nodes, running, case), phase=f"private bed, {len(cases)} "
            "generated cases (Node count, annotations and HPAs changing)", replay=run.replay,
            cases_dir=run.cases_dir))
    finally:
        run.report.unreflected += made.unreflected
        made.delete()
        poster.close()
        running.stop()
        nodes.set_count(1)
        api.close()


def _on_bed(api: client.ApiClient, nodes: live.NodeSet, running: webhooks.RunningWebhook,
            case: cases.Case) -> live.LiveResult:
    nodes.set_count(case.cluster.nodes)

    def restart(count: int) -> None:
        running.restart(lambda: nodes.set_count(count))

    return live.run_case(api, case, nodes=nodes, restart=restart)

