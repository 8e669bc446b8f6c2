"""The reference HA controller leaves no credential files behind, even on its os._exit(3)."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

from kubernetes import client

from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness.controller import ControllerReplicas, ControllerSettings
from zoneproof.components.reference.ha_controller import cli

_TIMEOUT_S = 60.0


def test_lease_loss_exit_removes_the_client_certificate_files(cluster_under_test: Cluster,
                                                               tmp_path: Path) -> None:
    """The leader's Lease is taken from it: it exits 3 at once, and its TMPDIR (where the
    kubernetes client writes the certificate and key of its kubeconfig) is empty."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    settings = ControllerSettings(namespaces=("default",), lease_name=f"zp-cleanup-{uuid.uuid4().hex[:6]}",
                                  extra_env={"TMPDIR": str(private_tmp)})
    replicas = ControllerReplicas(cluster_under_test, settings, tmp_path / "replicas", replicas=1,
                                  prefix="zp-cleanup")
    try:
        replicas.start_all()
        identity = replicas.wait_leader(_TIMEOUT_S)
        assert list(private_tmp.iterdir()), "the running controller keeps its credentials in TMPDIR"
        now = dt.datetime.now(dt.UTC)
        client.CoordinationV1Api(replicas.api).patch_namespaced_lease(
            settings.lease_name, settings.lease_namespace, {"spec": {
                "holderIdentity": "zp-thief", "acquireTime": now, "renewTime": now,
                "leaseDurationSeconds": 3600}})
        code = replicas.wait_exit(identity, settings.renew_deadline_s + _TIMEOUT_S)
    finally:
        replicas.stop_all()
    assert code == cli.EXIT_LEASE_LOST, replicas.log(identity)
    assert not list(private_tmp.rglob("*")), f"left behind: {sorted(map(str, private_tmp.rglob('*')))}"
