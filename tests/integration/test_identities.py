"""Distinct client identities from the CSR API, and the audit log that attributes deletes."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Cluster
from zoneproof.measure import pod_deletions


def test_issued_identity_acts_and_is_attributed_in_the_audit_log(
        cluster_under_test: Cluster, core_v1: client.CoreV1Api, namespace: str,
        tmp_path: Path) -> None:
    if (reason := facets.audit_unmet(cluster_under_test, what="attribution")) is not None:
        pytest.skip(reason)
    rbac = client.RbacAuthorizationV1Api(core_v1.api_client)
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "zp-actor"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                      "name": "zoneproof:actors"}]})
    kubeconfig = cluster_under_test.client_kubeconfig(
        "zp-actor-1", ("zoneproof:actors",), tmp_path / "actor.kubeconfig")
    actor = client.CoreV1Api(kube.api_client(kubeconfig))
    core_v1.create_namespaced_pod(namespace, {"metadata": {"name": "victim"}, "spec": {
        "containers": [{"name": "c", "image": "fake"}]}})
    actor.delete_namespaced_pod("victim", namespace, grace_period_seconds=0)
    # the actor is confined to its binding: other namespaces are forbidden
    forbidden = None
    try:
        actor.list_namespaced_pod("kube-system")
    except client.ApiException as exc:
        forbidden = exc.status
    assert forbidden == 403
    audit = cluster_under_test.audit_log()
    assert audit is not None

    def audited() -> tuple[bool, list[str]]:
        found = [d for d in pod_deletions(audit) if d.namespace == namespace]
        return bool(found), [f"{d.user}:{d.pod}:{d.code}" for d in found]

    found = waiting.wait_for(audited, what="the audited delete", timeout_s=10)
    # the actor's grace-0 delete; kwok (the fake kubelet) may follow up on the same pod
    # (404 when it is gone, 200 when its request raced the actor's)
    assert found[0] == "zp-actor-1:victim:200"
    assert {entry.rsplit(":", 1)[0] for entry in found[1:]} <= {"zoneproof-kwok:victim"}
