"""SIGINT, SIGTERM and SIGKILL of each zoneproof process at each phase leave nothing behind.

Phases and the process signalled: **up** (``zoneproof up`` while it starts the bed),
**conformance** (``zoneproof qualify`` alone while its pytest runs conformance cases against
the registered webhook; and, ``long``, its whole process group with SIGKILL), **fault
active** and **revert** (``chaos run`` on a bed kept by ``zoneproof up``, while a kubelet is
stopped, and as the revert action starts). Afterwards no process, port, run directory,
private file (certificate, key, kubeconfig), temp file (each test gives its own ``TMPDIR``)
or bed of the run may remain, no object the run labelled in the cluster, and no fault: the
kept bed runs all its processes and its nodes are Ready again.

Who cleans: SIGINT and SIGTERM take the same path (KeyboardInterrupt: teardowns, the chaos
control's close, the run's close). SIGKILL leaves it to the run's keeper, which ends the
run's processes (pytest gets SIGTERM and cleans up its own run), undoes its holdings
(labelled objects, the Lease, a bed of the run, a repair of the kept bed: the stopped
kubelet starts again) and removes the run's directory. If the keeper died too, the next
zoneproof command that starts anything does the same (``test_the_next_command_reaps``).

One signal per phase runs by default (a representative subset); the others are marked
``long`` (``make test-signals`` runs them all).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from zoneproof._util import daemons, kube, reaping, waiting
from zoneproof.runs import state, sweep

#: default_bed: it makes local beds of its own (a run qualifying a user's cluster makes none,
#: and the local backend's binaries need not be there)
pytestmark = [pytest.mark.destructive, pytest.mark.default_bed, pytest.mark.xdist_group("signals")]
ROOT = Path(__file__).parents[2]
CLI = [sys.executable, "-m", "zoneproof.cli.main"]
CHAOS = [str(Path(sys.executable).with_name("chaos")), "run"]
EXPERIMENT = ROOT / "chaos" / "kubelet-stop-one-node.yaml"
REVERT_ACTION = "Action: kubelets-back"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
#: The signal each phase is tried with by default; the other two are `long`.
REPRESENTATIVE = {"up": signal.SIGKILL, "conformance": signal.SIGINT,
                  "fault-active": signal.SIGTERM, "revert": signal.SIGKILL}


def _signals(phase: str) -> list[object]:
    return [pytest.param(sig, id=sig.name,
                         marks=() if REPRESENTATIVE[phase] is sig else (pytest.mark.long,))
            for sig in SIGNALS]


def _records(host, name: str) -> dict[str, daemons.DaemonRecord]:
    path = host.state / "local" / name / "state.json"
    data = state.read_json(path) if path.is_file() else {"processes": {}}
    return {n: daemons.DaemonRecord.from_dict(r) for n, r in data["processes"].items()}


def _wait_apiserver_started(host, name: str, up) -> None:
    """Until ``up`` (still running) has started the bed's API server: mid-creation."""
    def started() -> tuple[bool, None]:
        assert up.poll() is None, host.log("up.log")[-3000:]
        return "kube-apiserver" in _records(host, name), None

    waiting.wait_for(started, what="up to start the API server", timeout_s=600,
                     interval_s=0.2, ignore=(ValueError, OSError))


def _ended(proc, sig: signal.Signals, timeout_s: float = 600) -> int:
    proc.send_signal(sig)
    return int(proc.wait(timeout=timeout_s))


@pytest.mark.parametrize("sig", _signals("up"))
def test_signal_during_up(host, sig: signal.Signals) -> None:
    up = host.start([*CLI, "up", "--cluster-name", "sig"], "up.log")
    _wait_apiserver_started(host, "sig", up)
    host.remember_ports("sig")
    code = _ended(up, sig)
    assert code == (-9 if sig is signal.SIGKILL else 128 + sig), host.log("up.log")
    assert host.wait_clean() == {}, host.log("up.log")


def _kube(host, name: str) -> client.ApiClient:
    return kube.api_client(host.state / "local" / name / "kubeconfig", retries=1)


def _labelled(api: client.ApiClient) -> list[str]:
    """Objects any zoneproof run labelled that are still in the cluster."""
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    admission = client.AdmissionregistrationV1Api(api)
    found = [f"Namespace/{n.metadata.name}" for n in core.list_namespace(
        label_selector=sweep.RUN_LABEL).items]
    found += [f"ClusterRole/{r.metadata.name}" for r in rbac.list_cluster_role(
        label_selector=sweep.RUN_LABEL).items]
    found += [f"ClusterRoleBinding/{r.metadata.name}" for r in rbac.list_cluster_role_binding(
        label_selector=sweep.RUN_LABEL).items]
    found += [f"MutatingWebhookConfiguration/{m.metadata.name}" for m in
              admission.list_mutating_webhook_configuration(label_selector=sweep.RUN_LABEL).items]
    return found


#: SIGKILL of qualify's whole process group (pytest and its workers at once, as a CI runner
#: or a terminal's hang-up does): only the keeper, in a session of its own, is left to clean.
GROUP_KILL = "SIGKILL-group"


@pytest.mark.parametrize("sig", [*_signals("conformance"),
                                 pytest.param(GROUP_KILL, id=GROUP_KILL, marks=pytest.mark.long)])
def test_signal_to_qualify_during_conformance(host, sig: signal.Signals | str) -> None:
    reports = host.state.parent / "reports"
    qualify = host.start([*CLI, "qualify", "--cluster-name", "sigq", "--no-html", "--reports",
                          str(reports), "--workers", "1", "--", "-k", "test_case_on_shared_cluster"],
                         "qualify.log", cwd=ROOT, own_group=sig == GROUP_KILL)

    def conformance_running() -> tuple[bool, object]:
        if not (host.state / "local" / "sigq" / "kubeconfig").is_file():
            return False, "no bed yet"
        with _kube(host, "sigq") as api:
            found = _labelled(api)
        return any(f.startswith("MutatingWebhook") for f in found) and any(
            f.startswith("Namespace/hac-") for f in found), found  # a case's namespace

    waiting.wait_for(conformance_running, what="conformance cases against the webhook",
                     timeout_s=900, interval_s=1.0, ignore=(Exception,))
    host.remember_ports("sigq")
    if sig == GROUP_KILL:
        os.killpg(qualify.pid, signal.SIGKILL)
        code = int(qualify.wait(timeout=600))
    else:
        code = _ended(qualify, sig)
    killed = sig in (signal.SIGKILL, GROUP_KILL)
    assert code == (-9 if killed else 128 + int(sig)), host.log("qualify.log")[-3000:]
    assert host.wait_clean(timeout_s=300) == {}, host.log("qualify.log")[-3000:]
    assert not reports.exists() or any(p.is_file() for p in reports.rglob("*")), \
        "an empty report directory is removed"


@pytest.fixture(scope="module")
def kept_bed(module_host) -> Iterator[str]:
    """A bed kept by ``zoneproof up`` (a user's bed) that chaos runs are signalled on."""
    result = module_host.cli("up", "--cluster-name", "sigc", timeout_s=900)
    assert result.returncode == 0, result.stderr
    yield "sigc"


def _chaos(host, bed: str) -> object:
    return host.start([*CHAOS, str(EXPERIMENT), "--var", f"zoneproof_cluster={bed}"],
                      "chaos.log", cwd=host.state.parent)


def _stopped(host, bed: str) -> list[str]:
    return [n for n, r in _records(host, bed).items() if not daemons.alive(r)]


def _assert_restored(host, bed: str) -> None:
    """Nothing of the chaos run is left, no fault is active, the bed is whole again."""
    assert host.wait_clean(keep_beds=(bed,), timeout_s=300) == {}, host.log("chaos.log")[-3000:]
    waiting.wait_for(lambda: (host.cli("status", "--cluster-name", bed).returncode == 0, None),
                     what=f"{bed}: every process running and every node Ready", timeout_s=120,
                     interval_s=2.0)
    assert _stopped(host, bed) == []
    with _kube(host, bed) as api:
        assert _labelled(api) == []
        leases = client.CoordinationV1Api(api).list_namespaced_lease("default").items
        assert "zoneproof-ha-controller" not in {lease.metadata.name for lease in leases}


def _wait_fault(host, bed: str, chaos: object) -> list[str]:
    def active() -> tuple[bool, list[str]]:
        assert chaos.poll() is None, host.log("chaos.log")[-3000:]  # type: ignore[attr-defined]
        stopped = _stopped(host, bed)
        return bool(stopped), stopped

    return waiting.wait_for(active, what="the kubelet fault active", timeout_s=600,
                            interval_s=0.2)


@pytest.mark.parametrize("sig", _signals("fault-active"))
def test_signal_to_chaos_run_while_a_fault_is_active(module_host, kept_bed: str,
                                                     sig: signal.Signals) -> None:
    chaos = _chaos(module_host, kept_bed)
    assert _wait_fault(module_host, kept_bed, chaos)
    code = _ended(chaos, sig)
    assert code != 0, module_host.log("chaos.log")[-3000:]
    _assert_restored(module_host, kept_bed)


@pytest.mark.parametrize("sig", _signals("revert"))
def test_signal_to_chaos_run_as_the_fault_is_reverted(module_host, kept_bed: str,
                                                      sig: signal.Signals) -> None:
    chaos = _chaos(module_host, kept_bed)
    _wait_fault(module_host, kept_bed, chaos)
    waiting.wait_for(lambda: (REVERT_ACTION in module_host.log("chaos.log"), None),
                     what="the revert action to start", timeout_s=600, interval_s=0.05)
    # the revert restarts the kubelet at once; waiting for Ready, rollbacks and SLOs follow
    assert _ended(chaos, sig) != 0, module_host.log("chaos.log")[-3000:]
    _assert_restored(module_host, kept_bed)


def test_the_next_command_reaps_when_the_keeper_died_too(host) -> None:
    """SIGKILL of ``up`` and of its keeper: ``zoneproof list`` says what leaked, and the next
    command that starts anything (here ``up`` of another bed) removes it first."""
    up = host.start([*CLI, "up", "--cluster-name", "orphan"], "up.log")
    _wait_apiserver_started(host, "orphan", up)
    host.remember_ports("orphan")
    run = next((host.state / "runs").iterdir())
    keeper = reaping.ProcessId.from_dict(state.read_json(run / "owner.json")["keeper"])
    keeper_killed = reaping.terminate([keeper], grace_s=0)  # SIGTERM: it is not reaping yet
    assert keeper_killed and not keeper.alive()
    assert _ended(up, signal.SIGKILL) == -9
    time.sleep(1)
    listing = host.cli("list")
    assert "leaked" in listing.stdout and "DEAD" in listing.stdout, listing.stdout
    assert "orphan" in host.beds(), "nobody reaped it yet"
    second = host.cli("up", "--cluster-name", "next", timeout_s=900)
    assert second.returncode == 0 and f"reaping run {run.name}" in second.stderr, second.stderr
    assert host.beds() == ["next"]
    assert host.cli("down", "--cluster-name", "next").returncode == 0
    assert host.wait_clean() == {}


# -- a signal while a fault is active: the verdict, and the revert after SIGKILL ----------

FAULTED = "zone-outage"
_EXPERIMENT_ONLY = ["-k", "test_experiment and not catches"]


def _wait_zone_down(host, proc, log: str) -> str:
    """The private bed the experiment faults, once one of its processes is stopped (the
    zone's kwok: its nodes go NotReady)."""
    def down() -> tuple[bool, str]:
        assert proc.poll() is None, host.log(log)[-3000:]
        for bed in host.beds():
            with contextlib.suppress(OSError, ValueError, KeyError):
                if _stopped(host, bed):
                    return True, bed
        return False, ""

    return waiting.wait_for(down, what=f"{FAULTED}'s fault active", timeout_s=900, interval_s=0.2)


def test_a_signal_during_a_fault_makes_the_qualification_interrupted(host) -> None:
    """SIGTERM to qualify's process group while zone-outage has zone a down: exit 143, the
    summary INTERRUPTED (never PASS), the experiment's test 'interrupted' with its SLOs
    NOT_RUN, no traceback, nothing left behind."""
    reports = host.state.parent / "reports"
    qualify = host.start([*CLI, "qualify", "--cluster-name", "sigf", "--no-html", "--reports",
                          str(reports), "--experiments", FAULTED, "--workers", "1", "--", *_EXPERIMENT_ONLY],
                         "qualify.log", cwd=ROOT, own_group=True)
    _wait_zone_down(host, qualify, "qualify.log")
    os.killpg(qualify.pid, signal.SIGTERM)
    code = int(qualify.wait(timeout=600))
    output = host.log("qualify.log")
    assert code == 143, output[-3000:]
    assert "Traceback" not in output, output[-6000:]
    assert "qualification INTERRUPTED (exit 143)" in output, output[-3000:]
    summary = state.read_json(next(reports.glob("*/summary.json")))
    assert summary["verdict"] == "INTERRUPTED", summary
    (test,) = [t for t in summary["tests"] if t["test"].endswith(f"test_experiment[{FAULTED}]")]
    assert test["outcome"] == "interrupted", summary["tests"]
    # judged NOT_RUN by the control; none at all if the worker was ended before it reported
    slos = [s for s in summary["slos"] if s["test"] == test["test"]]
    assert all(s["status"] == "NOT_RUN" and not s["pass"] for s in slos), slos
    assert host.wait_clean(timeout_s=300) == {}, output[-3000:]


#: How long a killed run's fault may outlast it: its keeper reverts it (here: deletes the
#: private bed it faulted) at once; the bound is generous for a loaded machine.
REVERT_BOUND_S = 60.0


def test_sigkill_of_the_group_during_a_fault_is_reverted_within_seconds(host) -> None:
    """SIGKILL of pytest's whole process group while zone-outage has zone a down: the run's
    keeper deletes the faulted bed first (the fault with it) — not after waiting on the
    experiment's namespaces, whose pods on the downed zone never finish terminating — and
    ``zoneproof list`` then shows the run as killed, with what was undone."""
    argv = [sys.executable, "-m", "pytest", "chaos/test_experiments.py", "-p",
            "no:cacheprovider", "-n", "1", f"--zp-experiments={FAULTED}", *_EXPERIMENT_ONLY]
    run = host.start(argv, "pytest.log", cwd=ROOT, own_group=True)
    bed = _wait_zone_down(host, run, "pytest.log")
    os.killpg(run.pid, signal.SIGKILL)
    killed = time.monotonic()
    run.wait(timeout=60)
    waiting.wait_for(lambda: (bed not in host.beds(), host.beds()),
                     what=f"the keeper to delete the faulted bed {bed}",
                     timeout_s=REVERT_BOUND_S, interval_s=0.1)
    print(f"fault reverted (bed {bed} deleted) {time.monotonic() - killed:.1f} s after SIGKILL")
    assert host.wait_clean(timeout_s=300) == {}, host.log("pytest.log")[-3000:]
    listing = host.cli("list").stdout
    assert "KILLED RUN" in listing and f"bed local/{bed}" in listing, listing
    assert "killed" in listing, listing
