"""The local bed's resync after a kwok restart: which pods it reports Ready, and how."""

from __future__ import annotations

import datetime

from kubernetes import client

from zoneproof.cluster.local import pod_resync


def _pod(name: str, phase: str = "Running", ready: str | None = "False", deleting: bool = False,
         gates: tuple[str, ...] = ()) -> client.V1Pod:
    conditions = [] if ready is None else [client.V1PodCondition(type="Ready", status=ready)]
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name, deletion_timestamp=datetime.datetime(2026, 1, 1) if deleting else None),
        spec=client.V1PodSpec(containers=[], readiness_gates=[
            client.V1PodReadinessGate(condition_type=g) for g in gates] or None),
        status=client.V1PodStatus(phase=phase, conditions=conditions))


def test_only_running_pods_not_being_deleted_and_not_ready_are_stuck() -> None:
    pods = [_pod("unready"), _pod("unknown", ready="Unknown"), _pod("no-condition", ready=None),
            _pod("ready", ready="True"), _pod("pending", phase="Pending"),
            _pod("succeeded", phase="Succeeded"), _pod("deleting", deleting=True)]
    assert [p.metadata.name for p in pod_resync.stuck_unready(pods)] == [
        "unready", "unknown", "no-condition"]


def test_the_patch_is_the_ready_again_stage_s_status() -> None:
    now = datetime.datetime(2026, 12, 6, 4, 5, 6, tzinfo=datetime.UTC)
    patch = pod_resync.ready_again_patch(_pod("p", gates=("example.com/gate",)), now)
    assert patch == {"status": {"conditions": [
        {"type": kind, "status": "True", "lastTransitionTime": "2026-12-06T04:05:06Z"}
        for kind in ("Ready", "ContainersReady", "example.com/gate")]}}


def test_no_resync_without_the_holders_before() -> None:
    assert pod_resync.start(client.ApiClient(), None, timeout_s=1.0) is None
    assert pod_resync.start(client.ApiClient(), {}, timeout_s=1.0) is None
