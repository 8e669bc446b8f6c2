"""Conformance of an HA controller (issue: force-delete pods of NotReady nodes, one actor).

Real bed, real processes: kwok fakes the kubelets, the real node-lifecycle controller
turns a silent node NotReady, the audit log says who deleted what. Tests are ordered
cheap first (the mutant run uses ``-x``); the one with the no-controller baseline is last.
Every test ends with the "never two actors" check over its namespaces.

Bounds are generous on purpose (the figures, in JUnit properties, tell the real times).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.cluster.interface import WORKLOAD_IMAGE, Cluster
from zoneproof.cluster.spec import Timings
from zoneproof.components.harness.controller import (
    REPLICA_PREFIX,
    ControllerReplicas,
    ControllerSettings,
)
from zoneproof.faults import FaultRecord, Injector, StopKubelets
from zoneproof.measure import Timeline, pod_deletions, unfenced_deletes
from zoneproof.report import junit
from zoneproof.slo import metrics
from zoneproof.specs import kubernetes

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("ha_controller")]

BED = Timings()  # the module bed's node-lifecycle timings (grace 8 s, toleration 30 s)
NOT_READY_TIMEOUT_S = BED.node_monitor_grace_period_s + 20
REACTION_BOUND_S = 10.0
"""NotReady observed → matching pods gone (the reference needs well under a second)."""
STAY_S = 3.0
"""How long a pod that must be left alone is watched (a wrong controller acts in ms)."""
LEADER_TIMEOUT_S = 15.0
MARGIN_S = 2.0
SIGTERM_TAKEOVER_BOUND_S = 2.0 + 1.5
STUCK_MARGIN_S = 10.0
WORKLOAD_TIMEOUT_S = NOT_READY_TIMEOUT_S + REACTION_BOUND_S + 20
FAULT_MAX_S = 600.0


# -- helpers ---------------------------------------------------------------------------

def _labels(settings: ControllerSettings, *, matching: bool) -> dict[str, str]:
    """Labels that match (or miss) the controller's equality-based selector."""
    try:
        labels = kubernetes.matching_labels(settings.selector)
    except errors.ConfigError as exc:
        pytest.skip(str(exc))
    if not matching:
        first = next(iter(labels))
        labels[first] += "-not"
    return labels


def _bare_pod(core: client.CoreV1Api, namespace: str, name: str, node: str,
              labels: dict[str, str]) -> str:
    """A pod bound to ``node`` (no scheduler); its uid."""
    pod = core.create_namespaced_pod(namespace, {
        "metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": WORKLOAD_IMAGE}]}})
    return str(pod.metadata.uid)


def _wait_running(core: client.CoreV1Api, pods: dict[tuple[str, str], str]) -> None:
    def probe() -> tuple[bool, dict[str, str]]:
        phases = {f"{ns}/{name}": core.read_namespaced_pod(name, ns).status.phase
                  for ns, name in pods}
        return all(p == "Running" for p in phases.values()), phases

    waiting.wait_for(probe, what="test pods Running", timeout_s=30)


def _state(core: client.CoreV1Api, namespace: str, name: str, uid: str) -> str:
    """'gone' (absent or replaced), 'deleting' or 'untouched'."""
    try:
        pod = core.read_namespaced_pod(name, namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return "gone"
        raise
    if pod.metadata.uid != uid:
        return "gone"
    return "deleting" if pod.metadata.deletion_timestamp else "untouched"


def _wait_gone(core: client.CoreV1Api, pods: dict[tuple[str, str], str], timeout_s: float) -> None:
    def probe() -> tuple[bool, dict[str, str]]:
        states = {f"{ns}/{n}": _state(core, ns, n, uid) for (ns, n), uid in pods.items()}
        return all(s == "gone" for s in states.values()), states

    waiting.wait_for(probe, what="matching pods force-deleted (gone)", timeout_s=timeout_s)


def _holds_for(probe: Callable[[], tuple[bool, Any]], *, for_s: float, what: str) -> None:
    """Assert ``probe`` keeps answering (True, _) for ``for_s`` seconds (fails at once if not)."""
    def broken() -> tuple[bool, Any]:
        ok, observed = probe()
        return not ok, observed

    try:
        observed = waiting.wait_for(broken, what=f"{what} to break", timeout_s=for_s)
    except waiting.WaitTimeout:
        return
    raise AssertionError(f"{what} did not hold for {for_s:g}s: {observed}")


def _untouched(core: client.CoreV1Api, pods: dict[tuple[str, str], str]
               ) -> Callable[[], tuple[bool, dict[str, str]]]:
    def probe() -> tuple[bool, dict[str, str]]:
        states = {f"{ns}/{n}": _state(core, ns, n, uid) for (ns, n), uid in pods.items()}
        return all(s == "untouched" for s in states.values()), states

    return probe


def _figure(record_property: Callable[[str, object], None], name: str, value: float) -> None:
    record_property(*junit.figure_property(name, value))
    print(f"{name} = {value:.3f}")


def _assert_one_actor(bed: Cluster, timeline: Timeline, *namespaces: str) -> None:
    """Every audited delete by a replica in ``namespaces`` was made while it held the Lease."""
    audit = bed.audit_log()
    assert audit is not None, "the bed has no audit log"
    deletes = [d for d in pod_deletions(audit, users_prefix=REPLICA_PREFIX)
               if d.namespace in namespaces]
    found = unfenced_deletes(deletes, timeline.events, users_prefix=REPLICA_PREFIX)
    assert not found, "deletes by a replica not holding the Lease:\n" + "\n".join(
        u.describe() for u in found)


def _deleters(bed: Cluster, namespace: str, name: str) -> set[str]:
    audit = bed.audit_log()
    assert audit is not None
    return {d.user for d in pod_deletions(audit, users_prefix=REPLICA_PREFIX)
            if d.namespace == namespace and d.pod == name}


def _other(replicas: ControllerReplicas, identity: str) -> str:
    return next(i for i in replicas.identities if i != identity)


def _stop_kubelet(injector: Injector, node: str) -> int:
    """Stop ``node``'s kubelet through the injector; the fault's key."""
    return injector.start(StopKubelets(nodes=(node,)), max_duration_s=FAULT_MAX_S)


def _stop_until_not_ready(injector: Injector, node: str) -> FaultRecord:
    key = _stop_kubelet(injector, node)
    injector.cluster.wait_nodes([node], ready=False, timeout_s=NOT_READY_TIMEOUT_S)
    return injector.record(key)


# -- tests (cheap first) ---------------------------------------------------------------


def _signal_leader(replicas: ControllerReplicas, settings: ControllerSettings,
                   sig: signal.Signals) -> tuple[str, str, float]:
    """Start the replicas, send ``sig`` to the leader; (old, new leader, seconds to takeover)."""
    replicas.start_all()
    leader = replicas.wait_leader(LEADER_TIMEOUT_S)
    start = time.monotonic()
    replicas.signal(leader, sig)
    new = replicas.wait_leader(settings.lease_duration_s + LEADER_TIMEOUT_S, not_=leader)
    return leader, new, time.monotonic() - start

def test_not_ready_node_loses_only_matching_pods(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, unwatched: str,
        hac_settings: ControllerSettings,
        record_property: Callable[[str, object], None]) -> None:
    """Only selector-matching pods of watched namespaces on the NotReady node are
    force-deleted, within a bound; nothing is deleted when the node recovers."""
    zones = module_bed.nodes_by_zone()
    victim, healthy = zones["zone-a"][0], zones["zone-b"][0]
    match, miss = (_labels(hac_settings, matching=m) for m in (True, False))
    doomed = {(watched, f"match-{i}"): _bare_pod(bed_core, watched, f"match-{i}", victim, match)
              for i in (1, 2)}
    spared = {(watched, "other-labels"): _bare_pod(bed_core, watched, "other-labels", victim, miss),
              (unwatched, "other-ns"): _bare_pod(bed_core, unwatched, "other-ns", victim, match),
              (watched, "ready-node"): _bare_pod(bed_core, watched, "ready-node", healthy, match)}
    _wait_running(bed_core, {**doomed, **spared})
    replicas.start_all()
    replicas.wait_leader(LEADER_TIMEOUT_S)

    fault = _stop_until_not_ready(injector, victim)
    _wait_gone(bed_core, doomed, REACTION_BOUND_S)
    reaction = waiting.wait_for(  # the recorders may see the deletes a moment after the API
        lambda: ((r := metrics.force_delete_after_not_ready(
            timeline, fault, [f"{ns}/{n}" for ns, n in doomed])) is not None, r),
        what="NotReady and every delete on the timeline", timeout_s=10)
    assert reaction is not None
    _figure(record_property, "force_delete_reaction_seconds", reaction)
    assert reaction <= REACTION_BOUND_S
    _holds_for(_untouched(bed_core, spared), for_s=STAY_S,
               what="non-matching, other-namespace and Ready-node pods untouched")

    late = {(watched, "late"): _bare_pod(bed_core, watched, "late", victim, match)}
    injector.revert_all()
    module_bed.wait_nodes([victim], ready=True, timeout_s=NOT_READY_TIMEOUT_S)
    _holds_for(_untouched(bed_core, {**spared, **late}), for_s=STAY_S,
               what="a matching pod on a node that turned Ready again untouched")
    _assert_one_actor(module_bed, timeline, watched, unwatched)


def test_sigterm_releases_the_lease_to_the_standby(
        *, module_bed: Cluster, timeline: Timeline, replicas: ControllerReplicas, watched: str,
        hac_settings: ControllerSettings,
        record_property: Callable[[str, object], None]) -> None:
    """SIGTERM: the leader exits 0 and releases; the standby holds the Lease within ~2 s."""
    leader, new, takeover = _signal_leader(replicas, hac_settings, signal.SIGTERM)
    _figure(record_property, "sigterm_takeover_seconds", takeover)
    assert replicas.wait_exit(leader, 10) == 0
    assert new == _other(replicas, leader)
    assert takeover <= SIGTERM_TAKEOVER_BOUND_S, (
        f"the standby took {takeover:.1f}s: was the Lease released on SIGTERM?")
    _assert_one_actor(module_bed, timeline, watched)


def test_transition_while_no_replica_runs_is_handled_on_start(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, hac_settings: ControllerSettings,
        record_property: Callable[[str, object], None]) -> None:
    """A node that went NotReady while no replica ran is acted on once one starts."""
    victim = module_bed.nodes_by_zone()["zone-a"][1]
    doomed = {(watched, "missed"): _bare_pod(bed_core, watched, "missed", victim,
                                             _labels(hac_settings, matching=True))}
    _wait_running(bed_core, doomed)
    _stop_until_not_ready(injector, victim)
    start = time.monotonic()
    replicas.start_all()
    _wait_gone(bed_core, doomed, LEADER_TIMEOUT_S + REACTION_BOUND_S)
    _figure(record_property, "start_to_catch_up_seconds", time.monotonic() - start)
    _assert_one_actor(module_bed, timeline, watched)


def test_frozen_leader_exits_on_resume_and_deletes_nothing(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, hac_settings: ControllerSettings,
        record_property: Callable[[str, object], None]) -> None:
    """A leader cut off past its renew deadline (SIGSTOP) exits non-zero on SIGCONT and
    deletes nothing; the other replica takes over and acts on the node that failed meanwhile."""
    victim = module_bed.nodes_by_zone()["zone-b"][1]
    doomed = {(watched, "victim"): _bare_pod(bed_core, watched, "victim", victim,
                                             _labels(hac_settings, matching=True))}
    _wait_running(bed_core, doomed)
    replicas.start_all()
    leader = replicas.wait_leader(LEADER_TIMEOUT_S)
    frozen = time.monotonic()
    replicas.signal(leader, signal.SIGSTOP)
    try:
        _stop_kubelet(injector, victim)  # goes NotReady ~grace later, around the resume
        new = replicas.wait_leader(hac_settings.lease_duration_s + LEADER_TIMEOUT_S,
                                   not_=leader)
        _figure(record_property, "frozen_leader_takeover_seconds", time.monotonic() - frozen)
        assert time.monotonic() - frozen > hac_settings.renew_deadline_s
    finally:
        replicas.signal(leader, signal.SIGCONT)
    code = replicas.wait_exit(leader, hac_settings.renew_deadline_s + LEADER_TIMEOUT_S)
    assert code not in (None, 0), f"{leader} exited {code} after losing the Lease"
    module_bed.wait_nodes([victim], ready=False, timeout_s=NOT_READY_TIMEOUT_S)
    _wait_gone(bed_core, doomed, REACTION_BOUND_S)
    assert _deleters(module_bed, watched, "victim") == {new}
    audit = module_bed.audit_log()
    assert audit is not None
    assert not [d for d in pod_deletions(audit, users_prefix=leader) if d.namespace == watched]
    _assert_one_actor(module_bed, timeline, watched)


def test_sigkill_failover_then_new_leader_acts(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, hac_settings: ControllerSettings,
        record_property: Callable[[str, object], None]) -> None:
    """SIGKILL the leader: the other replica holds the Lease within leaseDuration +
    retryPeriod (+ margin) and force-deletes on the next NotReady node."""
    victim = module_bed.nodes_by_zone()["zone-c"][0]
    leader, new, failover = _signal_leader(replicas, hac_settings, signal.SIGKILL)
    _figure(record_property, "sigkill_failover_seconds", failover)
    bound = hac_settings.lease_duration_s + hac_settings.retry_period_s + MARGIN_S
    assert failover <= bound
    assert new == _other(replicas, leader)

    doomed = {(watched, "next"): _bare_pod(bed_core, watched, "next", victim,
                                           _labels(hac_settings, matching=True))}
    _wait_running(bed_core, doomed)
    _stop_until_not_ready(injector, victim)
    _wait_gone(bed_core, doomed, REACTION_BOUND_S)
    assert _deleters(module_bed, watched, "next") == {new}
    _assert_one_actor(module_bed, timeline, watched)


def _workload_template(labels: dict[str, str], node: str) -> dict[str, Any]:
    preferred = [{"weight": 100, "preference": {"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}}]
    return {"metadata": {"labels": labels}, "spec": {
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
        "containers": [{"name": "c", "image": WORKLOAD_IMAGE}]}}


def _create_workloads(apps: client.AppsV1Api, namespace: str, labels: dict[str, str],
                      node: str) -> None:
    """StatefulSet ``db`` and Deployment ``core``, one replica each, preferring ``node``."""
    for name, create, extra in (
            ("db", apps.create_namespaced_stateful_set, {"serviceName": "db"}),
            ("core", apps.create_namespaced_deployment, {})):
        selector = {"matchLabels": {**labels, "workload": name}}
        template = _workload_template({**labels, "workload": name}, node)
        create(namespace, {"metadata": {"name": name}, "spec": {
            "replicas": 1, "selector": selector, "template": template, **extra}})


def _ready_on(core: client.CoreV1Api, namespace: str, workload: str) -> dict[str, str]:
    pods = core.list_namespaced_pod(namespace, label_selector=f"workload={workload}").items
    return {p.metadata.name: p.spec.node_name for p in pods
            if p.metadata.deletion_timestamp is None and any(
                c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])}


def _wait_ready_elsewhere(timeline: Timeline, fault: FaultRecord, namespace: str,
                          workload: str, *, timeout_s: float) -> float:
    """Seconds from ``fault`` until a pod of ``workload`` is Ready on a node it did not hit."""
    prefix = f"{namespace}/{workload}-"
    seconds = waiting.wait_for(
        lambda: ((t := metrics.ready_elsewhere(timeline, fault, prefix)) is not None, t),
        what=f"{prefix}* Ready off {fault.targets}", timeout_s=timeout_s)
    assert seconds is not None
    return seconds


def test_workloads_recover_faster_than_without_controller(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, unwatched: str,
        hac_settings: ControllerSettings,
        record_property: Callable[[str, object], None]) -> None:
    """One node stops: with the controller its StatefulSet and Deployment pods are Ready
    elsewhere soon; the baseline (an unwatched namespace, same node, same outage) has its
    Deployment pod replaced only after the taint-based eviction and its StatefulSet stuck."""
    victim = module_bed.nodes_by_zone()["zone-a"][0]
    labels = _labels(hac_settings, matching=True)
    apps = client.AppsV1Api(bed_core.api_client)
    for namespace in (watched, unwatched):
        _create_workloads(apps, namespace, labels, victim)

    def placed() -> tuple[bool, dict[str, dict[str, str]]]:
        where = {f"{ns}/{w}": _ready_on(bed_core, ns, w)
                 for ns in (watched, unwatched) for w in ("db", "core")}
        return all(len(p) == 1 for p in where.values()), where

    where = waiting.wait_for(placed, what="workload pods Ready", timeout_s=60)
    assert all(set(p.values()) == {victim} for p in where.values()), (
        f"assumption: the scheduler put every workload pod on {victim} (preferred): {where}")
    replicas.start_all()
    replicas.wait_leader(LEADER_TIMEOUT_S)

    fault = injector.record(_stop_kubelet(injector, victim))
    sts_with = _wait_ready_elsewhere(timeline, fault, watched, "db", timeout_s=WORKLOAD_TIMEOUT_S)
    deploy_with = _wait_ready_elsewhere(timeline, fault, watched, "core",
                                        timeout_s=WORKLOAD_TIMEOUT_S)
    deploy_without = _wait_ready_elsewhere(
        timeline, fault, unwatched, "core",
        timeout_s=BED.toleration_s + BED.node_monitor_grace_period_s + WORKLOAD_TIMEOUT_S)
    stuck_until = BED.toleration_s + BED.node_monitor_grace_period_s + STUCK_MARGIN_S
    stopped = fault.injected_at
    _holds_for(lambda: (metrics.ready_elsewhere(timeline, fault, f"{unwatched}/db-") is None,
                        f"{timeline.now() - stopped:.1f}s after the stop"),
               for_s=max(0.0, stopped + stuck_until - timeline.now()),
               what="the baseline StatefulSet pod stuck (no replacement)")
    for name, value in (("sts_recovery_with_controller_seconds", sts_with),
                        ("sts_still_stuck_without_controller_after_seconds", stuck_until),
                        ("deployment_replace_with_controller_seconds", deploy_with),
                        ("deployment_replace_without_controller_seconds", deploy_without)):
        _figure(record_property, name, value)
    assert sts_with <= WORKLOAD_TIMEOUT_S
    assert deploy_with < deploy_without
    _assert_one_actor(module_bed, timeline, watched, unwatched)
