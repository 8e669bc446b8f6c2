"""The reference HA controller leaves no credential files behind, even on its os._exit(3)."""

from __future__ import annotations

import datetime as dt
import signal
import tempfile
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


def test_a_sigkilled_replica_leaves_its_credentials_only_in_the_runs_private_dir(
        cluster_under_test: Cluster, tmp_path: Path) -> None:
    """SIGKILL gives the controller no chance to clean up: the harness points its TMPDIR into
    the run's private directory (removed with the run), so nothing lands in the system's
    temp dir."""
    system_tmp = Path(tempfile.gettempdir())
    before = set(system_tmp.glob("zp-hac-credentials-*"))
    settings = ControllerSettings(namespaces=("default",),
                                  lease_name=f"zp-killed-{uuid.uuid4().hex[:6]}")
    replicas = ControllerReplicas(cluster_under_test, settings, tmp_path / "replicas", replicas=1,
                                  prefix="zp-killed")
    try:
        replicas.start_all()
        identity = replicas.wait_leader(_TIMEOUT_S)
        scratch = replicas.secrets / f"tmp-{identity}"
        assert list(scratch.glob("zp-hac-credentials-*")), "its credentials are in the run's dir"
        replicas.signal(identity, signal.SIGKILL)
        replicas.wait_exit(identity, _TIMEOUT_S)
    finally:
        replicas.stop_all()
    assert set(system_tmp.glob("zp-hac-credentials-*")) == before
