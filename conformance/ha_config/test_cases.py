"""The high-availability-config webhook through a real API server, one test per case in ``cases/``.

Each case's objects are created through the bed's kube-apiserver, so selection is the API
server's (the registration's namespace/object selectors and operations); the stored object,
or the refusal, is judged by ``expectations.check_expectation`` (``zoneproof.conformance.
ha_config.live``). A review case (``via: review``) posts AdmissionReviews to the webhook
itself, at the URL and with the CA the harness knows (``direct``), in both versions.
Multi-Node cases with the default webhook configuration share the run's cluster and
webhook, in parallel, a namespace each. The others (1 Node, Node-count changes, webhook
restarts, toleration defaults) run in order on one private bed: the Node count is set by
adding or deleting Node objects through the API, and a webhook is started for each case.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import allure
import pytest
from kubernetes import client

from zoneproof._util import kube
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness import webhook as webhooks
from zoneproof.components.harness.component import Component
from zoneproof.conformance.ha_config import cases, direct, live
from zoneproof.slo.verdict import not_applicable

pytestmark = pytest.mark.cluster
ALL = cases.load_cases()
PRIVATE_GROUP = "ha-config-private-bed"


def _params(private: bool) -> list[Any]:
    selected = [c for c in ALL if (live.needs_private_bed(c) is not None) == private]
    group = ([pytest.mark.xdist_group(PRIVATE_GROUP), pytest.mark.expected_seconds(4)]
             if private else [])  # a private bed's nodes change: seconds, not milliseconds
    return [pytest.param(c, id=c.id, marks=group) for c in selected]


def _attach(name: str, value: object) -> None:
    allure.attach(json.dumps(value, indent=2, sort_keys=True), name=name,
                  attachment_type=allure.attachment_type.JSON)


def _check(case: cases.Case, run: Callable[[], live.LiveResult],
           record_property: Callable[[str, object], None]) -> None:
    """Label the test with its case, attach the input, run, attach each step's objects, judge."""
    for key, value in (("case", case.id), ("spec", case.spec), ("file", case.path.name)):
        record_property(key, value)
    allure.dynamic.feature("high-availability-config webhook")
    allure.dynamic.story(case.spec)
    allure.dynamic.label("case", case.id)
    allure.dynamic.description(case.description)
    allure.attach.file(str(case.path), name=f"case {case.path.name}",
                       attachment_type=allure.attachment_type.YAML)
    _attach("input object", case.object)
    result = run()
    record_property("namespace", result.namespace)
    for name, value in result.attachments():
        _attach(name, value)
    if not result.passed:
        pytest.fail(f"{case.id} ({case.spec}; {case.path.name}, namespace {result.namespace}):\n  "
                    + "\n  ".join(result.failures), pytrace=False)


@pytest.mark.parametrize("case", _params(private=False))
def test_case_on_shared_cluster(case: cases.Case, shared_api: client.ApiClient, shared_node_count: int,
                                request: pytest.FixtureRequest,
                                record_property: Callable[[str, object], None]) -> None:
    if shared_node_count < 2:
        pytest.skip(f"the shared cluster has {shared_node_count} Node(s); the case needs several")
    if case.direct:
        poster: direct.Poster = request.getfixturevalue("shared_poster")
        _check(case, lambda: live.run_review_case(shared_api, case, poster), record_property)
    else:
        _check(case, lambda: live.run_case(shared_api, case), record_property)


@pytest.fixture(scope="module")
def ha_bed(module_private_bed: Callable[..., Cluster]) -> Cluster:
    """The private bed of this module: one Node, one etcd member; cases set the Node count."""
    return module_private_bed(zones=("zone-a",), nodes_per_zone=1, etcd_members=1)


@dataclass(frozen=True, slots=True)
class BedWebhook:
    """The private bed's client, its Nodes and the case's webhook."""

    api: client.ApiClient
    nodes: live.NodeSet
    running: webhooks.RunningWebhook
    case: cases.Case

    def restart(self, count: int) -> None:
        """Stop the webhook's process, set the Node count, start it again behind its
        registration (``live.Restart``)."""
        self.running.restart(lambda: self.nodes.set_count(count, self.case.cluster.zones))


@pytest.fixture
def bed_webhook(request: pytest.FixtureRequest, webhook_component: Component,
                tmp_path: Path) -> Iterator[BedWebhook]:
    """The case's Node count on the private bed, then its webhook (configured per case) started."""
    case: cases.Case = request.node.callspec.params["case"]
    if not webhook_component.runs_command:
        pytest.skip(not_applicable(
            f"the case starts the webhook with its own settings (command-line arguments) "
                    f"and restarts its process on a bed of its own; the {webhook_component.label()}"
                    " is not started from a command by the suite: run private-bed cases with "
                    "--zp-webhook-command (or a variant) and --zp-components host"))
    ha_bed: Cluster = request.getfixturevalue("ha_bed")
    api = kube.api_client(ha_bed.kubeconfig)
    nodes = live.NodeSet(api)
    if case.fewest_nodes < (own := nodes.own()):  # kind: a control-plane Node besides the worker
        api.close()
        pytest.skip(f"the case needs {case.fewest_nodes} Node(s); this {ha_bed.backend} bed "
                    f"has {own} of its own")
    nodes.set_count(case.cluster.nodes, case.cluster.zones)
    running = webhooks.RunningWebhook(ha_bed, webhook_component, tmp_path / "webhook",
                                      extra_args=live.settings_args(case.settings)).start()
    try:
        yield BedWebhook(api, nodes, running, case)
    finally:
        running.stop()
        api.close()


@pytest.mark.parametrize("case", _params(private=True))
def test_case_on_private_bed(case: cases.Case, bed_webhook: BedWebhook,
                             record_property: Callable[[str, object], None]) -> None:
    bed = bed_webhook
    if case.direct:
        poster = direct.Poster(bed.running.url, bed.running.ca_bundle)
        try:
            _check(case, lambda: live.run_review_case(bed.api, case, poster), record_property)
        finally:
            poster.close()
    else:
        _check(case, lambda: live.run_case(bed.api, case, nodes=bed.nodes, restart=bed.restart),
               record_property)
