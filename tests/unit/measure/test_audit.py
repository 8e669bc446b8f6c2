"""Audited pod deletions: a pod acting with its ServiceAccount is the actor, by its name."""

from __future__ import annotations

import json
from pathlib import Path

from zoneproof.measure.audit import POD_NAME_EXTRA, actor, pod_deletions

SA = "system:serviceaccount:zoneproof-system:ha-controller"


def _event(user: dict[str, object], pod: str = "noobaa-0") -> str:
    return json.dumps({"stage": "ResponseComplete", "verb": "delete",
                       "objectRef": {"resource": "pods", "namespace": "ns", "name": pod},
                       "user": user, "responseStatus": {"code": 200},
                       "requestReceivedTimestamp": "2026-11-24T11:00:00.000000Z"})


def test_a_pod_with_its_service_account_is_the_actor() -> None:
    assert actor({"username": SA, "extra": {POD_NAME_EXTRA: ["ha-controller-7d-x1"]}}) == (
        "ha-controller-7d-x1", SA)
    assert actor({"username": SA}) == (SA, "")  # a token bound to no pod
    assert actor({"username": "zp-hac-0", "extra": {POD_NAME_EXTRA: ["p"]}}) == ("zp-hac-0", "")


def test_deletions_name_each_replica_pod(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text("\n".join([
        _event({"username": SA, "extra": {POD_NAME_EXTRA: ["ha-controller-7d-a"]}}, "p1"),
        _event({"username": SA, "extra": {POD_NAME_EXTRA: ["ha-controller-7d-b"]}}, "p2"),
        _event({"username": "system:serviceaccount:kube-system:pod-garbage-collector"}, "p3")]))
    found = pod_deletions(log, users_prefix="ha-controller-")
    assert [(d.user, d.pod, d.account) for d in found] == [
        ("ha-controller-7d-a", "p1", SA), ("ha-controller-7d-b", "p2", SA)]
