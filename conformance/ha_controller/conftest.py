"""Fixtures of the HA controller conformance suite: thin, over the zoneproof library.

Every test gets its own Lease (no state left by an earlier test's replicas), three fresh
namespaces on the module's bed (two the controller watches — its namespaces setting always
lists several — and one it must leave alone),
the controller's replicas (not started), a Timeline recording the Lease holder, node
readiness and pods, an Injector for its node faults (each a FaultRecord on that Timeline,
reverted at the end), and every node Ready again afterwards.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from kubernetes import client
from zoneproof_fixtures import namespaces

from zoneproof import faults
from zoneproof._util import kube
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness.controller import ControllerReplicas, ControllerSettings
from zoneproof.components.harness.in_cluster_controller import replicas_of
from zoneproof.measure import (
    LeaseRecorder,
    NodeReadyRecorder,
    PodRecorder,
    Recorder,
    Timeline,
    recording,
)
from zoneproof.report import junit
from zoneproof.slo.results import SloResult, SloStatus
from zoneproof.slo.verdict import not_applicable

_RESTORE_TIMEOUT_S = 60.0
#: The name under which a check the API server's record cannot decide reports NO_DATA.
NO_VERDICT = "controller-conformance"
#: Tests that need a verb of the replicas beyond start and stop (``controller.VERBS``).
_NEEDS = {"test_sigterm_releases_the_lease_to_the_standby": "exit-code",
          "test_frozen_leader_exits_on_resume_and_deletes_nothing": "freeze"}


@pytest.fixture(scope="module")
def bed_core(module_bed: Cluster) -> Iterator[client.CoreV1Api]:
    """CoreV1Api on the module's bed."""
    api = kube.api_client(module_bed.kubeconfig)
    yield client.CoreV1Api(api)
    api.close()


@pytest.fixture(autouse=True)
def restore_nodes(module_bed: Cluster) -> Iterator[None]:
    """After each test: every node's kubelet runs again and every node is Ready."""
    yield
    faults.restore_nodes(module_bed, timeout_s=_RESTORE_TIMEOUT_S)


@pytest.fixture
def hac_settings(controller_settings: ControllerSettings) -> ControllerSettings:
    """The controller settings with a Lease of this test's own (``<lease>-<random>``); a
    controller that fixes its Lease keeps it (an in-cluster one's manifests: their RBAC
    names it)."""
    if "lease" in controller_settings.component.fixed():
        return controller_settings
    return dataclasses.replace(
        controller_settings, lease_name=f"{controller_settings.lease_name}-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def timeline(bed_core: client.CoreV1Api, hac_settings: ControllerSettings) -> Iterator[Timeline]:
    """Lease holder, node Ready and pod events of the whole test."""
    api = bed_core.api_client
    recorders: list[Recorder] = [
        LeaseRecorder(api, hac_settings.lease_namespace, hac_settings.lease_name),
        NodeReadyRecorder(api), PodRecorder(api)]
    with recording(Timeline(), recorders) as recorded:
        yield recorded


@pytest.fixture
def injector(module_bed: Cluster, timeline: Timeline) -> Iterator[faults.Injector]:
    """The test's faults (kubelets stopped), on its timeline; whatever is left is reverted."""
    injector = faults.Injector(module_bed, timeline)
    try:
        yield injector
    finally:
        injector.revert_all()


@pytest.fixture
def watched(bed_core: client.CoreV1Api, timeline: Timeline, request: pytest.FixtureRequest
            ) -> Iterator[str]:
    """A namespace the controller acts in (created after recording started)."""
    with namespaces.temporary(bed_core, "w-" + request.node.name) as name:
        yield name


@pytest.fixture
def watched_too(bed_core: client.CoreV1Api, timeline: Timeline, request: pytest.FixtureRequest
                ) -> Iterator[str]:
    """A second namespace the controller acts in (its setting lists both)."""
    with namespaces.temporary(bed_core, "w2-" + request.node.name) as name:
        yield name


@pytest.fixture
def unwatched(bed_core: client.CoreV1Api, timeline: Timeline, request: pytest.FixtureRequest
              ) -> Iterator[str]:
    """A namespace the controller must leave alone (also the no-controller baseline)."""
    with namespaces.temporary(bed_core, "u-" + request.node.name) as name:
        yield name


@pytest.fixture
def replicas(*, module_bed: Cluster, hac_settings: ControllerSettings, watched: str,
             watched_too: str, tmp_path: Path, request: pytest.FixtureRequest
             ) -> Iterator[ControllerReplicas]:
    """Two replicas of the controller under test acting in ``watched`` and ``watched_too``;
    not started yet."""
    group = replicas_of(module_bed, hac_settings.with_namespaces(watched, watched_too),
                        tmp_path / "controller", replicas=2)
    verb = _NEEDS.get(request.node.originalname, "")
    if verb and (reason := group.cannot(verb)) is not None:
        pytest.skip(not_applicable(
            f"the replicas of the {hac_settings.component.label()} cannot take this test's "
            f"verb: {reason} (run it with --zp-components host)"))
    try:
        yield group
    finally:
        group.stop_all()


@pytest.fixture
def no_verdict(record_property: Callable[[str, object], None]) -> Callable[[str], NoReturn]:
    """Say the record cannot decide a check: the test records a NO_DATA result (which fails
    the strict verdict, summary.json) and skips with the reason, never passes."""
    def say(reason: str) -> NoReturn:
        record_property(*junit.slo_property(SloResult(NO_VERDICT, SloStatus.NO_DATA, None, 0.0,
                                                      "checks", reason)))
        pytest.skip(f"no verdict (NO_DATA): {reason}")

    return say
