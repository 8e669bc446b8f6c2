"""Conformance of an HA controller (issue: force-delete pods of NotReady nodes, one actor).

Real bed, real processes: kwok fakes the kubelets, the real node-lifecycle controller
turns a silent node NotReady, the audit log says who deleted what. Tests are ordered
cheap first (the mutant run uses ``-x``); the one with the no-controller baseline is last.
Every test ends with the "never two actors" check over its namespaces. A leader is failed
(SIGTERM, SIGKILL, SIGSTOP) only once the audit log shows the standby trying for the Lease
and trying again, so a failover never hangs on how fast the standby started.

Bounds are generous on purpose (the figures, in JUnit properties, tell the real times).
"""

from __future__ import annotations

import datetime
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest
from kubernetes import client

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.cluster import facets
from zoneproof.cluster.interface import WORKLOAD_IMAGE, Cluster
from zoneproof.cluster.spec import Timings
from zoneproof.components.harness.controller import (
    ControllerReplicas,
    ControllerSettings,
)
from zoneproof.conformance.ha_controller import labels as selectors
from zoneproof.faults import FaultRecord, Injector, StopKubelets
from zoneproof.faults.kubelet_report import NOT_READY_REASON, ready_condition, reporting_not_ready
from zoneproof.measure import (
    LeaseRequest,
    Timeline,
    attempts_after_seen_renewal,
    attempts_by,
    deletes_by_non_holders,
    lease_requests,
    lease_writes,
    pod_deletions,
    read_records,
)
from zoneproof.report import junit
from zoneproof.slo import metrics
from zoneproof.specs import kubernetes

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("ha_controller"),
              pytest.mark.expected_seconds(25)]

BED = Timings()  # the module bed's node-lifecycle timings (grace 8 s, toleration 30 s)
NOT_READY_TIMEOUT_S = BED.node_monitor_grace_period_s + 20
REACTION_BOUND_S = 10.0
"""NotReady observed → matching pods gone (the reference needs well under a second)."""
STAY_S = 3.0
"""How long a pod that must be left alone is watched (a wrong controller acts in ms)."""
LEADER_TIMEOUT_S = 15.0
"""The margin over a failover's Lease timings within which the new leader is awaited."""
START_TIMEOUT_S = 60.0
"""Replicas started → one holds the Lease: a precondition, not a judged timing (in a
qualification beside three beds on 2 cores a Python replica took 14 s to log its start)."""
STANDBY_START_TIMEOUT_S = START_TIMEOUT_S
"""Leader seen → the standby's first Lease attempt seen (it starts alongside the leader)."""
STUCK_MARGIN_S = 10.0
DEPLOYMENT_MARGIN_S = BED.toleration_s - REACTION_BOUND_S
"""How much sooner the Deployment pod must be Ready elsewhere with the controller than by
the baseline's taint eviction: the eviction comes ``toleration_s`` after NotReady, the
controller's delete within ``REACTION_BOUND_S`` of it (a controller that does nothing for
the Deployment ties the baseline and fails, never a coin toss)."""
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


def _wait_gone(core: client.CoreV1Api, pods: dict[tuple[str, str], str], timeout_s: float,
               *, after: str = "") -> None:
    """Every pod gone within ``timeout_s``; else an AssertionError saying ``after`` what, and
    each pod's state then (untouched / deleting / gone)."""
    def probe() -> tuple[bool, dict[str, str]]:
        states = {f"{ns}/{n}": _state(core, ns, n, uid) for (ns, n), uid in pods.items()}
        return all(s == "gone" for s in states.values()), states

    try:
        waiting.wait_for(probe, what="matching pods force-deleted (gone)", timeout_s=timeout_s)
    except waiting.WaitTimeout:
        raise AssertionError(f"matching pods not force-deleted within {timeout_s:g}s"
                             f"{' ' + after if after else ''}; observed: {probe()[1]}") from None


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


def _assert_one_actor(replicas: ControllerReplicas, bed: Cluster,
                      settings: ControllerSettings, *namespaces: str,
                      no_verdict: Callable[[str], NoReturn]) -> None:
    """Every audited delete by a replica in ``namespaces`` was made while it was the
    Lease's holder of record by the API server's own order: the last Lease write before
    the delete (revisions; no watcher, no client clock, no tolerance) left it holder. A
    catch-up just before taking the Lease is caught; a delete the record cannot order
    against a Lease write is no verdict (NO_DATA), never a pass."""
    records = read_records(_audit(bed, "the one-actor check"))[0]
    deletes = [d for d in pod_deletions(records, users_prefix=replicas.prefix)
               if d.namespace in namespaces]
    writes = lease_writes(records, namespace=settings.lease_namespace, name=settings.lease_name)
    found, undecided = deletes_by_non_holders(deletes, writes, users_prefix=replicas.prefix)
    assert not found, "deletes by a replica not holding the Lease:\n" + "\n".join(
        u.describe() for u in found)
    if undecided:
        no_verdict(f"the API server's record cannot order {len(undecided)} "
                            f"delete(s) against the Lease writes: {undecided[:3]}")


def _audit(bed: Cluster, what: str) -> Path:
    """The bed's audit log; on a cluster whose audit log zoneproof cannot read, the test
    skips here, after every check it could judge (a skip, never a pass without it)."""
    if (reason := facets.audit_unmet(bed, what=what)) is not None:
        pytest.skip(f"{reason}; the checks before it passed")
    audit = bed.audit_log()
    assert audit is not None
    return audit


def _deleters(replicas: ControllerReplicas, bed: Cluster, namespace: str, name: str) -> set[str]:
    audit = _audit(bed, f"who deleted {namespace}/{name}")
    return {d.user for d in pod_deletions(audit, users_prefix=replicas.prefix)
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


def _leader_with_competing_standby(replicas: ControllerReplicas, bed: Cluster,
                                   settings: ControllerSettings) -> str:
    """Start the replicas; the leader, once every other replica has been seen competing for
    the Lease (a read or write of it by that replica in the audit log) and seen trying again
    after it could have seen the leader renew it: a failover starts only when the standby is
    really in the race, so a standby still starting cannot win it by luck, and one that
    tried once, or stopped on seeing a healthy leader, fails here."""
    if (reason := facets.audit_unmet(bed, what="the standby competing for the Lease before "
                                     "the leader is failed")) is not None:
        pytest.skip(reason)
    audit = bed.audit_log()
    assert audit is not None
    replicas.start_all()
    leader = replicas.wait_leader(START_TIMEOUT_S)
    standbys = [i for i in replicas.identities if i != leader]
    lease = f"{settings.lease_namespace}/{settings.lease_name}"

    def requests() -> list[LeaseRequest]:
        return lease_requests(audit, namespace=settings.lease_namespace,
                              name=settings.lease_name, users_prefix=replicas.prefix)

    def tried() -> tuple[bool, dict[str, int]]:
        counts = attempts_by(requests(), standbys)
        return all(counts.values()), counts

    def tried_again() -> tuple[bool, dict[str, int]]:
        found = requests()
        counts = {s: attempts_after_seen_renewal(found, standby=s, leader=leader)
                  for s in standbys}
        return all(counts.values()), counts

    try:
        waiting.wait_for(tried, what=f"a Lease attempt by each standby of {standbys}",
                         timeout_s=STANDBY_START_TIMEOUT_S, interval_s=0.5)
    except waiting.WaitTimeout:
        raise AssertionError(
            f"a standby never competed for the Lease {lease}: attempts (reads or writes of "
            f"it in the audit log) {tried()[1]} within {STANDBY_START_TIMEOUT_S:g}s of "
            f"{leader} leading") from None
    limit = settings.standby_retry()
    try:
        waiting.wait_for(tried_again, what=f"each standby of {standbys} trying again after "
                         f"{leader} renewed", timeout_s=limit.seconds, interval_s=0.5)
    except waiting.WaitTimeout:
        found = requests()
        stopped = [s for s in standbys if not tried_again()[1][s]] or standbys
        renewals = sum(r.user == leader and r.renewed for r in found)
        raise AssertionError(
            f"the standby {', '.join(stopped)} stopped competing for the Lease {lease}: "
            f"{attempts_by(found, stopped)} attempt(s) in the audit log, none after one "
            f"could have seen {leader} renew it ({renewals} successful write(s) by "
            f"{leader}) within {limit.seconds:g}s of its first ({limit.derivation}); a "
            "standby must keep trying, or no one takes over when the leader fails") from None
    print(f"Lease attempts by the standby before {leader} is failed: {tried()[1]}, after it "
          f"could have seen a renewal: {tried_again()[1]}")
    return leader


def _signal_leader(replicas: ControllerReplicas, bed: Cluster, settings: ControllerSettings,
                   sig: signal.Signals) -> tuple[str, str, float]:
    """Start the replicas, send ``sig`` to the leader once the standby competes; (old, new
    leader, seconds to takeover)."""
    leader = _leader_with_competing_standby(replicas, bed, settings)
    start = time.monotonic()
    replicas.signal(leader, sig)
    new = replicas.wait_leader(settings.lease_duration_s + LEADER_TIMEOUT_S, not_=leader)
    return leader, new, time.monotonic() - start


def test_not_ready_node_loses_only_matching_pods(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, watched_too: str,
        unwatched: str, hac_settings: ControllerSettings,
        no_verdict: Callable[[str], NoReturn],
        record_property: Callable[[str, object], None]) -> None:
    """Only selector-matching pods of the watched namespaces (both of the setting's) on the
    NotReady node are force-deleted, within a bound: not those of a Ready node of the same
    zone or of another zone; nothing is deleted when the node recovers (a pod bound to it
    after the deletes may go while the controller could still be acting on the transition,
    within the reaction bound; not once the node is Ready again past that)."""
    zones = module_bed.nodes_by_zone()
    victim, neighbour, healthy = zones["zone-a"][0], zones["zone-a"][1], zones["zone-b"][0]
    match, miss = (_labels(hac_settings, matching=m) for m in (True, False))
    doomed = {(ns, f"match-{i}"): _bare_pod(bed_core, ns, f"match-{i}", victim, match)
              for i, ns in ((1, watched), (2, watched_too))}
    spared = {(watched, "other-labels"): _bare_pod(bed_core, watched, "other-labels", victim, miss),
              # every way of missing the selector: key absent, other value, the value or the
              # key in another case (a case-insensitive match deletes those)
              **{(watched_too, f"miss-{i}"): _bare_pod(bed_core, watched_too, f"miss-{i}",
                                                       victim, way)
                 for i, way in enumerate(selectors.parse(hac_settings.selector).misses())},
              (unwatched, "other-ns"): _bare_pod(bed_core, unwatched, "other-ns", victim, match),
              (watched_too, "same-zone-node"): _bare_pod(bed_core, watched_too, "same-zone-node",
                                                         neighbour, match),
              (watched, "ready-node"): _bare_pod(bed_core, watched, "ready-node", healthy, match)}
    _wait_running(bed_core, {**doomed, **spared})
    replicas.start_all()
    replicas.wait_leader(START_TIMEOUT_S)

    fault = _stop_until_not_ready(injector, victim)
    not_ready_seen = time.monotonic()
    _wait_gone(bed_core, doomed, REACTION_BOUND_S,
               after=f"of {victim} turning NotReady (kubelet stopped; namespaces setting "
                     f"{watched},{watched_too})")
    reaction = waiting.wait_for(  # the recorders may see the deletes a moment after the API
        lambda: ((r := metrics.force_delete_after_not_ready(
            timeline, fault, [f"{ns}/{n}" for ns, n in doomed])) is not None, r),
        what="NotReady and every delete on the timeline", timeout_s=10)
    assert reaction is not None
    _figure(record_property, "force_delete_reaction_seconds", reaction)
    assert reaction <= REACTION_BOUND_S, (
        f"the matching pods went {reaction:.2f}s after {victim}'s NotReady, over "
        f"{REACTION_BOUND_S:g}s")
    _holds_for(_untouched(bed_core, spared), for_s=STAY_S,
               what=f"non-matching, other-namespace pods on {victim}, pods on {neighbour} (Ready, "
                    f"same zone) and on {healthy} (Ready) untouched")

    late = {(watched, "late"): _bare_pod(bed_core, watched, "late", victim, match)}
    # a controller may still be acting on the transition (or kcm's fence, ms later) for the
    # reaction bound: only a delete after that, on the recovery, has no trigger (C3)
    time.sleep(max(0.0, not_ready_seen + REACTION_BOUND_S + 1 - time.monotonic()))
    if _state(bed_core, watched, "late", late[(watched, "late")]) != "untouched":
        late = {}  # deleted while the transition could still explain it: allowed
        print(f"{watched}/late was deleted within the reaction bound of the transition")
    injector.revert_all()
    module_bed.wait_nodes([victim], ready=True, timeout_s=NOT_READY_TIMEOUT_S)
    _holds_for(_untouched(bed_core, {**spared, **late}), for_s=STAY_S,
               what=f"after {victim} was read back Ready again (over {REACTION_BOUND_S:g}s "
                    "after its transition): a matching pod bound to it while NotReady, and the "
                    "spared pods, untouched")
    _assert_one_actor(replicas, module_bed, hac_settings, watched, watched_too, unwatched,
                      no_verdict=no_verdict)


def test_kubelet_reported_not_ready_is_acted_on(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, replicas: ControllerReplicas,
        watched: str, watched_too: str, hac_settings: ControllerSettings,
        no_verdict: Callable[[str], NoReturn]) -> None:
    """Ready True→False posted by the kubelet itself (runtime down; its Lease still renewed,
    so it never turns Unknown): the node's matching pods are force-deleted (C1). What
    happens when kcm's fence lands after that is the controller's to choose (C4: the seeds
    filter that event out; acting on it is allowed, the generated suite checks it is
    harmless)."""
    victim = module_bed.nodes_by_zone()["zone-b"][0]
    match = _labels(hac_settings, matching=True)
    doomed = {(ns, "reported"): _bare_pod(bed_core, ns, "reported", victim, match)
              for ns in (watched, watched_too)}
    _wait_running(bed_core, doomed)
    replicas.start_all()
    replicas.wait_leader(START_TIMEOUT_S)
    with reporting_not_ready(module_bed, victim, lease_duration_s=BED.node_lease_duration_s):
        posted = waiting.wait_for(
            lambda: ((c := ready_condition(bed_core, victim)) == ("False", NOT_READY_REASON),
                     c), what=f"{victim} Ready=False as its kubelet posted it", timeout_s=10)
        _wait_gone(bed_core, doomed, REACTION_BOUND_S,
                   after=f"of {victim}'s kubelet posting Ready=False (read back {posted}, its "
                         "node Lease renewed)")
        still = ready_condition(bed_core, victim)
        assert still == ("False", NOT_READY_REASON), (
            f"the check is void: {victim}'s Ready condition was overwritten to {still} "
            "during it (kwok or kcm)")
    _assert_one_actor(replicas, module_bed, hac_settings, watched, watched_too,
                      no_verdict=no_verdict)


def test_sigterm_releases_the_lease_to_the_standby(
        *, module_bed: Cluster, timeline: Timeline, replicas: ControllerReplicas, watched: str,
        hac_settings: ControllerSettings, no_verdict: Callable[[str], NoReturn],
        record_property: Callable[[str, object], None]) -> None:
    """SIGTERM (once the standby is seen trying for the Lease, and trying again): the leader
    exits and releases; the standby holds the Lease within one jittered retry period
    (+ margin)."""
    leader, new, takeover = _signal_leader(replicas, module_bed, hac_settings, signal.SIGTERM)
    _figure(record_property, "sigterm_takeover_seconds", takeover)
    code = replicas.wait_exit(leader, 10)  # raises if it still runs: a shutdown exits
    print(f"{leader} exited {code} on SIGTERM (any code: the seeds name none for a clean "
          "shutdown)")
    assert new == _other(replicas, leader), f"the Lease went to {new!r} after {leader} exited"
    limit = hac_settings.takeover_after_release()
    assert takeover <= limit.seconds, (
        f"the standby took {takeover:.1f}s after SIGTERM to {leader}, over {limit.seconds:g}s "
        f"({limit.derivation}): was the Lease released on SIGTERM?")
    _assert_one_actor(replicas, module_bed, hac_settings, watched, no_verdict=no_verdict)


def test_transition_while_no_replica_runs_is_handled_on_start(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str,
        hac_settings: ControllerSettings, no_verdict: Callable[[str], NoReturn],
        record_property: Callable[[str, object], None]) -> None:
    """A node that went NotReady while no replica ran is acted on once one starts, and only
    once it holds the Lease: the Lease is still the previous leader's (it died), so the
    catch-up must wait for the take-over (judged by the audit log's order, no tolerance)."""
    victim = module_bed.nodes_by_zone()["zone-a"][1]
    doomed = {(watched, "missed"): _bare_pod(bed_core, watched, "missed", victim,
                                             _labels(hac_settings, matching=True))}
    _wait_running(bed_core, doomed)
    _stop_until_not_ready(injector, victim)
    _lease_of_a_dead_leader(bed_core.api_client, hac_settings)
    start = time.monotonic()
    replicas.start_all()
    _wait_gone(bed_core, doomed,
               hac_settings.takeover_after_kill().seconds + LEADER_TIMEOUT_S + REACTION_BOUND_S,
               after=f"of starting the replicas ({victim} NotReady before any ran; the Lease "
                     "left by a dead leader)")
    _figure(record_property, "start_to_catch_up_seconds", time.monotonic() - start)
    _assert_one_actor(replicas, module_bed, hac_settings, watched, no_verdict=no_verdict)


def _lease_of_a_dead_leader(api: client.ApiClient, settings: ControllerSettings) -> None:
    """The test's Lease as a previous leader (not a replica) left it: renewed just now."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    client.CoordinationV1Api(api).create_namespaced_lease(settings.lease_namespace, {
        "metadata": {"name": settings.lease_name},
        "spec": {"holderIdentity": "previous-leader", "leaseDurationSeconds":
                 settings.lease_duration_s, "acquireTime": now, "renewTime": now,
                 "leaseTransitions": 3}})


def test_frozen_leader_exits_on_resume_and_deletes_nothing(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str,
        hac_settings: ControllerSettings, no_verdict: Callable[[str], NoReturn],
        record_property: Callable[[str, object], None]) -> None:
    """A leader cut off past its renew deadline (SIGSTOP, once the standby is seen trying for
    the Lease, and trying again) exits non-zero on SIGCONT and deletes nothing; the other
    replica takes over and acts on the node that failed meanwhile."""
    victim = module_bed.nodes_by_zone()["zone-b"][1]
    doomed = {(watched, "victim"): _bare_pod(bed_core, watched, "victim", victim,
                                             _labels(hac_settings, matching=True))}
    _wait_running(bed_core, doomed)
    leader = _leader_with_competing_standby(replicas, module_bed, hac_settings)
    frozen = time.monotonic()
    replicas.signal(leader, signal.SIGSTOP)
    try:
        _stop_kubelet(injector, victim)  # goes NotReady ~grace later, around the resume
        new = replicas.wait_leader(hac_settings.lease_duration_s + LEADER_TIMEOUT_S,
                                   not_=leader)
        _figure(record_property, "frozen_leader_takeover_seconds", time.monotonic() - frozen)
        assert time.monotonic() - frozen > hac_settings.renew_deadline_s, (
            f"{new} took the Lease {time.monotonic() - frozen:.1f}s after {leader} froze, "
            f"within its renew deadline {hac_settings.renew_deadline_s:g}s")
    finally:
        replicas.signal(leader, signal.SIGCONT)
    code = replicas.wait_exit(leader, hac_settings.renew_deadline_s + LEADER_TIMEOUT_S)
    assert code not in (None, 0), f"{leader} exited {code} after losing the Lease"
    module_bed.wait_nodes([victim], ready=False, timeout_s=NOT_READY_TIMEOUT_S)
    _wait_gone(bed_core, doomed, REACTION_BOUND_S)
    deleters = _deleters(replicas, module_bed, watched, "victim")
    assert deleters == {new}, f"{watched}/victim deleted by {deleters}, expected only {new}"
    audit = _audit(module_bed, "what the frozen leader deleted")
    by_old = [d for d in pod_deletions(audit, users_prefix=leader) if d.namespace == watched]
    assert not by_old, f"the frozen leader {leader} deleted after resuming: {by_old}"
    _assert_one_actor(replicas, module_bed, hac_settings, watched, no_verdict=no_verdict)


def test_sigkill_failover_then_new_leader_acts(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str,
        hac_settings: ControllerSettings, no_verdict: Callable[[str], NoReturn],
        record_property: Callable[[str, object], None]) -> None:
    """SIGKILL the leader (once the standby is seen trying for the Lease, and trying again):
    the other replica holds the Lease within leaseDuration + two jittered retry periods
    (+ margin) and force-deletes on the next NotReady node."""
    victim = module_bed.nodes_by_zone()["zone-c"][0]
    leader, new, failover = _signal_leader(replicas, module_bed, hac_settings, signal.SIGKILL)
    _figure(record_property, "sigkill_failover_seconds", failover)
    limit = hac_settings.takeover_after_kill()
    assert failover <= limit.seconds, (
        f"{new} took the Lease {failover:.1f}s after SIGKILL to {leader}, over "
        f"{limit.seconds:g}s ({limit.derivation})")
    # another replica: with two host replicas the other one; in-cluster the standby or the
    # Deployment's replacement for the killed pod, whichever took the Lease
    assert new != leader and new in replicas.identities, (
        f"the Lease went to {new!r} after {leader} died")

    doomed = {(watched, "next"): _bare_pod(bed_core, watched, "next", victim,
                                           _labels(hac_settings, matching=True))}
    _wait_running(bed_core, doomed)
    _stop_until_not_ready(injector, victim)
    _wait_gone(bed_core, doomed, REACTION_BOUND_S,
               after=f"of {victim} turning NotReady under the new leader {new}")
    deleters = _deleters(replicas, module_bed, watched, "next")
    assert deleters == {new}, f"{watched}/next deleted by {deleters}, expected only {new}"
    _assert_one_actor(replicas, module_bed, hac_settings, watched, no_verdict=no_verdict)


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
    return waiting.wait_for_value(lambda: metrics.ready_elsewhere(timeline, fault, prefix),
                                  what=f"{prefix}* Ready off {fault.targets}",
                                  timeout_s=timeout_s)


def test_workloads_recover_faster_than_without_controller(
        *, module_bed: Cluster, bed_core: client.CoreV1Api, timeline: Timeline,
        injector: Injector, replicas: ControllerReplicas, watched: str, unwatched: str,
        hac_settings: ControllerSettings, no_verdict: Callable[[str], NoReturn],
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
    replicas.wait_leader(START_TIMEOUT_S)

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
    assert sts_with <= WORKLOAD_TIMEOUT_S, (
        f"the StatefulSet pod was Ready elsewhere {sts_with:.1f}s after the stop, over "
        f"{WORKLOAD_TIMEOUT_S:g}s")
    assert deploy_with + DEPLOYMENT_MARGIN_S <= deploy_without, (
        f"the Deployment pod was Ready elsewhere {deploy_with:.1f}s after the stop with the "
        f"controller, {deploy_without:.1f}s without (taint eviction): not at least "
        f"{DEPLOYMENT_MARGIN_S:g}s sooner (toleration {BED.toleration_s:g}s - reaction bound "
        f"{REACTION_BOUND_S:g}s); did the controller force-delete it?")
    _assert_one_actor(replicas, module_bed, hac_settings, watched, unwatched, no_verdict=no_verdict)
