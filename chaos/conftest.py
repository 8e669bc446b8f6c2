"""Chaos experiments on a private bed: after each one every kubelet runs and etcd is healthy.

``--zp-experiments`` / ``--zp-skip-experiments`` (file stems) select which ones run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client
from zoneproof_fixtures import settings

from zoneproof import faults
from zoneproof._util import kube, waiting
from zoneproof.chaos import catalog, experiment
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.components.harness import component
from zoneproof.slo.verdict import not_applicable

_RESTORE_TIMEOUT_S = 60.0
#: Where an experiment's workloads live (its other namespaces: ``experiment.NAMESPACE_STEMS``);
#: namespaces of other tests (``zp-<test>``, beside on a user's cluster) are not waited for.
_WORKLOADS = ExperimentConfig().namespace


@pytest.fixture(autouse=True)
def restore_bed(module_bed: Cluster) -> Iterator[None]:
    """Whatever an experiment left: kubelets started, nodes Ready, etcd healthy."""
    yield
    faults.restore_nodes(module_bed, timeout_s=_RESTORE_TIMEOUT_S)
    if Capability.ETCD_MEMBERS in module_bed.capabilities:  # not on a user's cluster
        facets.facet(module_bed, Capability.ETCD_MEMBERS).wait_etcd_healthy(
            timeout_s=_RESTORE_TIMEOUT_S)
    with kube.api_client(module_bed.kubeconfig) as api:
        core = client.CoreV1Api(api)

        def gone() -> tuple[bool, list[str]]:
            left = [n.metadata.name for n in core.list_namespace().items
                    if experiment.experiment_namespace(n.metadata.name, _WORKLOADS)]
            return not left, left

        # the next experiment's drain must not meet this one's pods still terminating
        waiting.wait_for(gone, what="the experiment's namespaces deleted",
                         timeout_s=_RESTORE_TIMEOUT_S, ignore=(client.ApiException,))


@pytest.fixture
def experiment_workdir(request: pytest.FixtureRequest, report_dir: Path | None,
                       tmp_path: Path) -> Path:
    """Where an experiment's journal, timeline and plots go: the report dir, else tmp."""
    if report_dir is None:
        return tmp_path
    workdir: Path = report_dir / "chaos" / request.node.callspec.params["path"].stem
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir


def experiment_of(item: pytest.Item) -> str | None:
    """The experiment a test item runs: its ``path`` parameter, or a ``case``'s first field."""
    params = getattr(item, "callspec", None) and item.callspec.params
    if not params:
        return None
    if isinstance(params.get("path"), Path):
        return str(params["path"].stem)
    case = params.get("case")
    return str(case[0]) if isinstance(case, tuple) else None


def _skip_twins_without_variant(s: settings.Settings, items: list[pytest.Item]) -> None:
    """A broken-controller twin (``case`` = experiment, variant, SLO, ...) is skipped, before
    its bed is made, when the controller under test cannot be started as that variant."""
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params
        case = params.get("case") if params else None
        if isinstance(case, tuple) and len(case) >= 3:
            reason = s.components.controller.cannot_be(case[1])
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=not_applicable(
                    f"no broken twin to prove {case[0]} can fail: {reason}")))


def _skip_in_cluster_experiments(s: settings.Settings, items: list[pytest.Item]) -> None:
    """An experiment that does not apply to the components under test (``catalog``: tagged
    ``in-cluster`` and they do not both run in the cluster) is skipped, saying how to run it."""
    excluded = catalog.not_applicable(Path(__file__).parent, s.components)
    for item in items:
        if (name := experiment_of(item)) in excluded:
            item.add_marker(pytest.mark.skip(reason=not_applicable(
                f"{name} {excluded[name]}: run it with --zp-backend kind "
                f"--zp-components {component.IN_CLUSTER}")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect experiments per --zp-experiments / --zp-skip-experiments (unknown names
    fail); skip the broken twins the controller under test has no variant for, and the
    in-cluster experiments unless the components run in the cluster."""
    s = config.stash[settings.KEY]
    _skip_twins_without_variant(s, items)
    _skip_in_cluster_experiments(s, items)
    if not s.experiments and not s.skip_experiments:
        return
    known = catalog.names(Path(__file__).parent)
    unknown = sorted(set(s.experiments + s.skip_experiments) - set(known))
    if unknown:
        raise pytest.UsageError(f"unknown chaos experiment(s) {', '.join(unknown)}: choose from "
                                f"{', '.join(known)}")

    def wanted(item: pytest.Item) -> bool:
        name = experiment_of(item)
        if name is None:
            return True
        return (not s.experiments or name in s.experiments) and name not in s.skip_experiments

    deselected = [i for i in items if not wanted(i)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [i for i in items if wanted(i)]
