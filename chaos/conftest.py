"""Chaos experiments on private beds: after each one every kubelet runs and etcd is healthy.

An experiment tagged ``zones`` runs on a bed whose zones are failure domains (``zoned_bed``:
the run's backend under its ``Traits.zoned_options``), in one of ``ZONED_BEDS`` xdist groups
(``zoned_group``) so each such bed serves its share in turn. The others run on their worker's bed
(``worker_bed``) in no group: xdist hands each to whichever worker is free, so with several
workers several beds run experiments at once and the experiments' waits (node-monitor grace,
Lease durations, tolerations) overlap.
``--zp-experiments`` / ``--zp-skip-experiments`` (file stems) select which ones run.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from zoneproof_fixtures import reporting, settings

from zoneproof import cluster as clusters
from zoneproof import faults
from zoneproof._util import kube, waiting
from zoneproof.chaos import catalog, experiment
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.cluster import cluster_dns, facets
from zoneproof.cluster.interface import Backend, Capability, Cluster
from zoneproof.components.harness import registry, source
from zoneproof.runs import identity
from zoneproof.slo.verdict import not_applicable

_RESTORE_TIMEOUT_S = 60.0
#: Where an experiment's workloads live (its other namespaces: ``experiment.NAMESPACE_STEMS``);
#: namespaces of other tests (``zp-<test>``, beside on a user's cluster) are not waited for.
_WORKLOADS = ExperimentConfig().namespace


@pytest.fixture(scope="module")
def zoned_bed(zp_settings: settings.Settings, zp_backend: Backend,
              request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A private bed whose zones are failure domains, for the module: the run's backend under
    its zoned options; skipped, saying why, where it makes none (then those experiments are
    not applicable: ``catalog.not_applicable``)."""
    traits = zp_backend.traits
    if not traits.makes_clusters or traits.zoned_options is None:
        pytest.skip(f"needs a bed whose zones are failure domains (an etcd member and "
                    f"control-plane replicas per zone, links to cut): the {zp_backend.name} "
                    "backend makes none here (the local backend does, as root)")
    backend = clusters.get_backend(zp_backend.name, options=traits.zoned_options)
    name = f"zp-zones-{uuid.uuid4().hex[:6]}"
    bed = backend.create(settings.replace_spec(zp_settings.spec, name=name), progress=_progress)
    try:
        identity.record(identity.identify(bed, role="private bed"))
        yield bed
    finally:
        backend.delete(name, progress=_progress)


def _progress(message: str) -> None:
    print(f"zoneproof: {message}", flush=True)


#: The xdist groups of the experiments on zoned beds: each group's worker runs its share in turn
#: on one zoned bed. Two halve the chain of zoned experiments (about five minutes on one bed
#: in qualify: the gate's longest path), for one more bed (3 API servers, ~14 s to make).
ZONED_GROUP = "chaos-zones"
ZONED_BEDS = 2


def zoned_group(name: str, zoned: list[str]) -> str:
    """The xdist group of experiment ``name``, one of the run's ``zoned`` experiments: they
    go to the ``ZONED_BEDS`` groups in turn, in name order."""
    return f"{ZONED_GROUP}-{sorted(zoned).index(name) % ZONED_BEDS + 1}"


def _on_zoned_bed(name: str | None, backend: Backend) -> bool:
    """Experiment ``name`` is tagged ``zones`` and the beds the backend makes do not take its
    faults without the zoned layout: it runs on ``zoned_bed`` (a user's cluster is every
    bed: what it takes shows at run time)."""
    return (name is not None and backend.traits.makes_clusters
            and name in catalog.zoned_only(Path(__file__).parent)
            and not catalog.fault_needs(Path(__file__).parent, name)
            <= backend.traits.plain_capabilities)


@pytest.fixture
def experiment_bed(request: pytest.FixtureRequest, zp_backend: Backend) -> Cluster:
    """The bed the test's experiment runs on: ``zoned_bed`` for one tagged ``zones`` whose
    faults the backend's plain beds do not take, else its worker's; the test skips, saying
    why, on a bed that cannot take its faults."""
    name = experiment_of(request.node)
    zoned = _on_zoned_bed(name, zp_backend)
    bed: Cluster = request.getfixturevalue("zoned_bed" if zoned else "worker_bed")
    # a user's cluster shows what it takes only now (beds zoneproof makes: at collection)
    if name is not None and (reason := facets.unmet(
            bed, catalog.fault_needs(Path(__file__).parent, name),
            what=f"experiment {name}")) is not None:
        pytest.skip(not_applicable(reason))
    return bed


@pytest.fixture(autouse=True)
def restore_bed(experiment_bed: Cluster) -> Iterator[None]:
    """Whatever an experiment left: kubelets started, nodes Ready, etcd healthy, CoreDNS
    scaled back (the next
    test on the bed, of this worker, finds it as the first did)."""
    yield
    _restore(experiment_bed)


@pytest.fixture
def restore(experiment_bed: Cluster) -> Callable[[], None]:
    """Restores the experiment's bed now (``restore_bed`` between two runs in one test)."""
    return lambda: _restore(experiment_bed)


def _restore(bed: Cluster) -> None:
    faults.restore_nodes(bed, timeout_s=_RESTORE_TIMEOUT_S)
    if Capability.ETCD_MEMBERS in bed.capabilities:  # not on a user's cluster
        facets.facet(bed, Capability.ETCD_MEMBERS).wait_etcd_healthy(timeout_s=_RESTORE_TIMEOUT_S)
    with kube.api_client(bed.kubeconfig) as api:
        if Capability.CLUSTER_DNS in bed.capabilities:  # a DNS outage a run left in force
            cluster_dns.restore(api)
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
    """The experiment a test item of chaos/ runs: its ``path`` parameter, or a ``case``'s
    first field (None for tests elsewhere: a unit test of the experiment files is not one)."""
    params = getattr(item, "callspec", None) and item.callspec.params
    if not params or Path(__file__).parent not in item.path.parents:
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
        if isinstance(case, tuple) and len(case) >= 3 and experiment_of(item) is not None:
            reason = s.components.controller.cannot_be(case[1]) or _not_the_reference_webhook(s, case)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=not_applicable(
                    f"no broken twin to prove {case[0]} can fail: {reason}")))


def _not_the_reference_webhook(s: settings.Settings, case: tuple[Any, ...]) -> str | None:
    """Why a twin that breaks the reference webhook by its arguments (``deploy-webhook``
    ``args``) cannot run: another webhook is under test (None: it can)."""
    arguments = case[3] if len(case) > 3 else {}
    args = arguments.get("deploy-webhook", {}).get("args")
    webhook = s.components.webhook
    reference = (webhook.implementation is not None and webhook.implementation.name == registry.REFERENCE
                 and webhook.variant == registry.REFERENCE)
    return None if not args or reference else (
        f"it runs the reference webhook with {args}, and {webhook.label()} is under test")


def _skip_in_cluster_experiments(s: settings.Settings, backend: Backend,
                                 items: list[pytest.Item]) -> None:
    """An experiment that does not apply to the run (``catalog``: tagged ``in-cluster`` and
    the components do not both run in the cluster; tagged ``zones`` and the backend makes no
    beds with failure-domain zones; its faults need what the backend's beds lack) is
    skipped, saying why."""
    zones = backend.traits.makes_clusters and backend.traits.zoned_options is not None
    excluded = catalog.not_applicable(Path(__file__).parent, s.components, zones=zones,
                                      capabilities=backend.traits.plain_capabilities,
                                      beds_known=backend.traits.makes_clusters)
    zoned = catalog.zoned_only(Path(__file__).parent)
    in_cluster = catalog.in_cluster_only(Path(__file__).parent)
    for item in items:
        if experiment_of(item) in zoned:  # a zoned bed each: `make test-zones`, not `make test`
            item.add_marker(pytest.mark.zones)
        if (name := experiment_of(item)) in excluded:
            how = (f": run it with --zp-backend kind --zp-components {source.IN_CLUSTER}"
                   if name in in_cluster else "")
            item.add_marker(pytest.mark.skip(reason=not_applicable(
                f"{name} {excluded[name]}{how}")))


def _group_zoned(backend: Backend, items: list[pytest.Item]) -> None:
    """The selected experiments that run on a zoned bed, not skipped, go to its xdist groups."""
    on_zoned_beds = sorted({name for item in items if (name := experiment_of(item)) is not None
                            and item.get_closest_marker("skip") is None
                            and _on_zoned_bed(name, backend)})
    for item in items:
        if (name := experiment_of(item)) in on_zoned_beds:
            item.add_marker(pytest.mark.xdist_group(zoned_group(name, on_zoned_beds)))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect experiments per --zp-experiments / --zp-skip-experiments (unknown names
    fail) and the ``opt-in`` ones not named; skip the broken twins the controller under test
    has no variant for, and the in-cluster experiments unless the components run in the
    cluster."""
    s = config.stash[settings.KEY]
    backend = settings.make_backend(config, s.backend)
    _skip_twins_without_variant(s, items)
    _skip_in_cluster_experiments(s, backend, items)
    _deselect(config, s, items)
    _group_zoned(backend, items)


def _deselect(config: pytest.Config, s: settings.Settings, items: list[pytest.Item]) -> None:
    """The ``opt-in`` experiments not named and those --zp-experiments /
    --zp-skip-experiments leave out."""
    opt_in = catalog.opt_in(Path(__file__).parent) - set(s.experiments)
    if left_out := [i for i in items if experiment_of(i) in opt_in]:  # named only
        for item in left_out:
            name = experiment_of(item)
            item.stash[reporting.DESELECTED_WHY] = (
                f"opt-in: {name} runs only when named (zoneproof qualify --experiments {name}; "
                f"pytest --zp-experiments {name}; docs/zones.md)")
        config.hook.pytest_deselected(items=left_out)
        items[:] = [i for i in items if i not in left_out]
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
