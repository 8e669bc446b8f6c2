"""The existing backend never substitutes another cluster, and leaves a user's cluster as it
found it (issue 14, item 5).

The "user's cluster" is a bed kept by ``zoneproof up``, driven as ``existing`` by its admin
kubeconfig. A snapshot of what a user would notice — namespaces, RBAC, webhook
registrations, CSRs, Leases, ConfigMaps, Secrets, ServiceAccounts, workloads, and each
Node's schedulability, taints and labels — is taken before and compared after: a finished
run, an interrupted one (SIGKILL: the run's keeper cleans up), and the refusals.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from zoneproof._util import kube, waiting
from zoneproof.runs import sweep

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("existing-untouched")]
ROOT = Path(__file__).parents[2]
CLI = [sys.executable, "-m", "zoneproof.cli.main"]
CHAOS = [str(Path(sys.executable).with_name("chaos")), "run"]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]


@pytest.fixture(scope="module")
def users(module_host) -> Iterator[Path]:
    """The user's cluster: its kubeconfig."""
    result = module_host.cli("up", "--cluster-name", "users", "--nodes-per-zone", "1", timeout_s=900)
    assert result.returncode == 0, result.stderr
    yield module_host.state / "local" / "users" / "kubeconfig"


def snapshot(kubeconfig: Path) -> dict[str, Any]:
    """What a user would notice changed in their cluster (no Events, no versions)."""
    with kube.api_client(kubeconfig) as api:
        core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
        admission, apps = client.AdmissionregistrationV1Api(api), client.AppsV1Api(api)

        def names(items: list[Any], namespaced: bool = False) -> list[str]:
            return sorted(f"{i.metadata.namespace}/{i.metadata.name}" if namespaced
                          else i.metadata.name for i in items)

        return {
            "namespaces": names(core.list_namespace().items),
            "clusterroles": names(rbac.list_cluster_role().items),
            "clusterrolebindings": names(rbac.list_cluster_role_binding().items),
            "roles": names(rbac.list_role_for_all_namespaces().items, True),
            "rolebindings": names(rbac.list_role_binding_for_all_namespaces().items, True),
            "mutating": names(admission.list_mutating_webhook_configuration().items),
            "validating": names(admission.list_validating_webhook_configuration().items),
            "csrs": names(client.CertificatesV1Api(api).list_certificate_signing_request().items),
            "leases": names(client.CoordinationV1Api(api).list_lease_for_all_namespaces().items,
                            True),
            "configmaps": names(core.list_config_map_for_all_namespaces().items, True),
            "secrets": names(core.list_secret_for_all_namespaces().items, True),
            "serviceaccounts": names(core.list_service_account_for_all_namespaces().items, True),
            "deployments": names(apps.list_deployment_for_all_namespaces().items, True),
            "statefulsets": names(apps.list_stateful_set_for_all_namespaces().items, True),
            "pods": names(core.list_pod_for_all_namespaces().items, True),
            "nodes": {n.metadata.name: {"unschedulable": bool(n.spec.unschedulable),
                                        "taints": sorted(t.key for t in n.spec.taints or []),
                                        "labels": n.metadata.labels}
                      for n in core.list_node().items},
        }


def _same(kubeconfig: Path, before: dict[str, Any], timeout_s: float = 180) -> None:
    """Wait until the cluster is as it was (namespaces take a while to go); assert it."""
    def probe() -> tuple[bool, dict[str, Any]]:
        now = snapshot(kubeconfig)
        return now == before, {k: v for k, v in now.items() if v != before[k]}

    try:
        waiting.wait_for(probe, what="the cluster as it was", timeout_s=timeout_s,
                         interval_s=2.0)
    except waiting.WaitTimeout as exc:
        pytest.fail(f"the user's cluster changed: {exc}")


def _allowed_copy(stem: str, directory: Path) -> Path:
    """Experiment ``stem`` on the existing backend with destructive faults allowed (chaoslib
    keeps only configuration keys an experiment declares, so they are written in)."""
    doc = yaml.safe_load((ROOT / "chaos" / f"{stem}.yaml").read_text())
    doc["configuration"] |= {"zoneproof_backend": "existing",
                             "zoneproof_allow_destructive": "true"}
    path = directory / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _run(host, argv: list[str], kubeconfig: Path, *, cwd: Path, timeout_s: float = 900
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=host.env(KUBECONFIG=str(kubeconfig)), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout_s, check=False)


def test_chaos_run_on_a_users_cluster_refuses_before_touching_it(module_host, users: Path,
                                                                 tmp_path: Path) -> None:
    before = snapshot(users)
    result = _run(module_host, [*CHAOS, str(ROOT / "chaos" / "zone-outage.yaml"), "--var",
                                "zoneproof_backend=existing"], users, cwd=tmp_path)
    assert result.returncode != 0
    assert "refused before any of its actions ran" in result.stderr, result.stderr[-3000:]
    assert "Action: deploy" not in result.stderr, "no deploy action ran"
    assert snapshot(users) == before
    assert module_host.beds() == ["users"], "no other bed stood in"


def test_runs_on_a_users_cluster_leave_it_as_it_was(module_host, users: Path,
                                                    tmp_path: Path) -> None:
    before = snapshot(users)
    tests = _run(module_host, [*PYTEST, "conformance/ha_config/test_cases.py",
                               "chaos/test_experiments.py", "-k",
                               "(test_case_on_shared_cluster and e0) or test_experiment",
                               "--zp-backend", "existing", "--zp-kubeconfig", str(users), "-rs"],
                 users, cwd=ROOT)
    assert tests.returncode == 0, tests.stdout[-4000:]
    assert "never substitutes another cluster" in tests.stdout, "chaos tests skipped, saying why"
    assert " passed" in tests.stdout
    _same(users, before)
    for stem in ("webhook-down", "zone-drain"):  # need only leave to disrupt
        ran = _run(module_host, [*CHAOS, str(_allowed_copy(stem, tmp_path))], users,
                   cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr[-4000:]
        _same(users, before)
    assert module_host.beds() == ["users"]


def test_an_interrupted_run_on_a_users_cluster_leaves_it_as_it_was(module_host, users: Path,
                                                                   tmp_path: Path) -> None:
    before = snapshot(users)
    log = tmp_path / "chaos.log"
    with log.open("wb") as sink:
        chaos = subprocess.Popen([*CHAOS, str(_allowed_copy("zone-drain", tmp_path))],
                                 env=module_host.env(KUBECONFIG=str(users)), cwd=tmp_path,
                                 stdout=sink, stderr=subprocess.STDOUT)

    def drained() -> tuple[bool, Any]:
        assert chaos.poll() is None, log.read_text()[-3000:]
        nodes = snapshot(users)["nodes"]
        return any(n["unschedulable"] for n in nodes.values()), nodes

    waiting.wait_for(drained, what="a zone cordoned by the run", timeout_s=600, interval_s=1.0)
    os.kill(chaos.pid, signal.SIGKILL)
    chaos.wait()
    _same(users, before)
    assert module_host.wait_clean(keep_beds=("users",), timeout_s=120) == {}


def test_qualify_names_the_cluster_it_tested_and_never_another(module_host, users: Path,
                                                               tmp_path: Path) -> None:
    before = snapshot(users)
    only = module_host.cli("qualify", "--backend", "existing", "--kubeconfig", str(users),
                           "--experiments", "zone-outage")
    assert only.returncode == 4 and "never substitutes" in only.stderr, only.stderr
    reports = tmp_path / "reports"
    result = _run(module_host, [*CLI, "qualify", "--backend", "existing", "--kubeconfig",
                                str(users), "--no-html", "--reports", str(reports), "--workers", "1",
                                "--", "-k", "test_case_on_shared_cluster and e01"],
                  users, cwd=ROOT, timeout_s=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    summary = json.loads(next(reports.glob("*/summary.json")).read_text())
    tested = summary["clusters"][0]
    with kube.api_client(users) as api:
        uid = client.CoreV1Api(api).read_namespace("kube-system").metadata.uid
        server = api.configuration.host
    assert (tested["backend"], tested["server"], tested["kube_system_uid"]) == (
        "existing", server, uid)
    assert tested["version"].startswith("v1.")
    assert [c for c in summary["clusters"] if c["kube_system_uid"] != uid] == [], \
        "no other cluster was tested"
    # -k chose a subset: PARTIAL, exit 0, the rest named as not judged (as asked)
    assert "PARTIAL (exit 0) for existing cluster" in result.stderr and uid in result.stderr
    assert summary["verdict"] == "PARTIAL" and all(n["asked"] for n in summary["not_judged"])
    assert module_host.beds() == ["users"]
    _same(users, before)
    assert sweep.RUN_LABEL not in json.dumps(snapshot(users)["nodes"])
