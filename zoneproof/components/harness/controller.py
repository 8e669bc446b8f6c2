"""Run an HA controller under test as N replicas on a cluster, whatever its source.

The component (``component.Component``) says what runs: a registered implementation
(the reference and its variants) or a vendor's command template, started the same way.
Every replica gets its own client identity (a certificate from the cluster's CSR API,
CN = its holderIdentity), so the API server's audit log says which replica deleted what.
Their kubeconfigs live in the run's private directory; the RBAC is labelled with the run
and the Lease held by it (both removed when the run ends, however it ends). Every start
is described (``started.Started``) and noted in the ledger reports use.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import daemons, kube, waiting
from zoneproof.cluster import audit_policy
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness import started
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.kinds import Kind
from zoneproof.runs import sweep

__all__ = ["GROUP", "REPLICA_JITTER", "REPLICA_PREFIX", "TAKEOVER_MARGIN_S", "VERBS",
           "ControllerReplicas", "ControllerSettings", "Limit", "max_retry_wait_s",
           "standby_gap_s", "takeover_after_kill_s", "takeover_after_release_s"]

#: Group of every controller identity; RBAC is bound to it (and its Lease writes audited).
GROUP = audit_policy.CONTROLLER_GROUP
ROLE = "zoneproof-ha-controller"
#: Every replica's identity (its Lease holderIdentity and client user name) starts so:
#: ``zp-hac-0``, ``zp-hac-1``...; the audit log attributes deletes by it.
REPLICA_PREFIX = "zp-hac"

#: client-go's leader election waits between attempts with wait.JitterUntil(retryPeriod,
#: jitterFactor 1.2): each wait is retryPeriod x (1 + rand[0,1) x 1.2), up to 2.2 x retryPeriod.
REPLICA_JITTER = 1.2
#: What a test may do to replicas beyond start and stop (``ControllerReplicas.cannot``):
#: freeze and thaw one (SIGSTOP, SIGCONT), read the exit code of one that ended.
VERBS = ("freeze", "exit-code")
#: Seconds for the API round trips (read, then write the Lease) and a loaded machine's
#: scheduling, added to every take-over limit.
TAKEOVER_MARGIN_S = 2.0


# --- the Lease timing bounds (C7, C8), one derivation for the hand tests and the model ----

def max_retry_wait_s(retry_period_s: float) -> float:
    """The longest wait between two attempts of a client-go elector (jitter included)."""
    return retry_period_s * (1 + REPLICA_JITTER)


def takeover_after_release_s(retry_period_s: float) -> float:
    """A released Lease is taken on a standby's next jittered attempt."""
    return max_retry_wait_s(retry_period_s) + TAKEOVER_MARGIN_S


def takeover_after_kill_s(lease_duration_s: float, retry_period_s: float) -> float:
    """A dead holder's last renewal is seen up to one jittered retry late, then the lease
    duration passes, then the next jittered attempt takes it."""
    return lease_duration_s + 2 * max_retry_wait_s(retry_period_s) + TAKEOVER_MARGIN_S


def standby_gap_s(lease_duration_s: float, retry_period_s: float) -> float:
    """The longest a standby may go without trying for the Lease: two waits at the seed's
    pace (its lease duration, 002, or the jittered retry if longer), a jittered retry for
    the leader's renewal, the margin."""
    retry = max_retry_wait_s(retry_period_s)
    return 2 * max(lease_duration_s, retry) + retry + TAKEOVER_MARGIN_S


@dataclass(frozen=True, slots=True)
class Limit:
    """A time limit derived from the stated Lease timings, and how."""

    seconds: float
    derivation: str


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    """The controller under test and what it is told."""

    namespaces: tuple[str, ...]
    selector: str = "app=noobaa"
    lease_name: str = "zoneproof-ha-controller"
    lease_namespace: str = "default"
    #: Shortened from client-go's 15/10/2 s so failover tests take seconds.
    lease_duration_s: int = 6
    renew_deadline_s: float = 4.0
    retry_period_s: float = 1.0
    component: Component = field(default_factory=lambda: Component(Kind.CONTROLLER))
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.component.kind != Kind.CONTROLLER:
            raise errors.ConfigError(f"ControllerSettings needs a controller, got the "
                                     f"{self.component.label()}")

    def argv(self, *, kubeconfig: Path, identity: str) -> list[str]:
        """The command line of one replica (placeholders filled in)."""
        return self.component.argv({
            "python": sys.executable, "kubeconfig": kubeconfig, "identity": identity,
            "namespaces": ",".join(self.namespaces), "selector": self.selector,
            "lease_name": self.lease_name, "lease_namespace": self.lease_namespace,
            "lease_duration": self.lease_duration_s, "renew_deadline": self.renew_deadline_s,
            "retry_period": self.retry_period_s})

    @property
    def max_retry_wait_s(self) -> float:
        """The longest wait between two attempts of a client-go elector (jitter included)."""
        return max_retry_wait_s(self.retry_period_s)

    def takeover_after_release(self) -> Limit:
        """From the leader's release (SIGTERM) until a standby holds the Lease: the standby's
        next attempt (a released Lease is free at once)."""
        return Limit(takeover_after_release_s(self.retry_period_s),
                     f"retryPeriod {self.retry_period_s:g} s x (1 + jitter {REPLICA_JITTER:g}) "
                     f"+ {TAKEOVER_MARGIN_S:g} s")

    def standby_retry(self) -> Limit:
        """From a standby's first attempt on the Lease (seen) until it has tried again after
        seeing the leader renew it. A standby may pace its attempts by leaseDuration (seed
        002: losers "sleep for their lease duration and then attempt again"), so two of its
        waits are allowed at that pace, plus a jittered retry for the leader's renewal."""
        return Limit(standby_gap_s(self.lease_duration_s, self.retry_period_s),
                     f"2 x leaseDuration {self.lease_duration_s:g} s + retryPeriod "
                     f"{self.retry_period_s:g} s x (1 + jitter {REPLICA_JITTER:g}) + "
                     f"{TAKEOVER_MARGIN_S:g} s")

    def takeover_after_kill(self) -> Limit:
        """From the leader's death (SIGKILL, no release) until a standby holds the Lease: the
        standby sees the last renewal up to one jittered retry late, waits leaseDuration from
        then, and takes it on its next jittered attempt."""
        return Limit(takeover_after_kill_s(self.lease_duration_s, self.retry_period_s),
                     f"leaseDuration {self.lease_duration_s:g} s + 2 x retryPeriod "
                     f"{self.retry_period_s:g} s x (1 + jitter {REPLICA_JITTER:g}) + "
                     f"{TAKEOVER_MARGIN_S:g} s")

    def with_namespaces(self, *namespaces: str) -> ControllerSettings:
        """A copy acting in ``namespaces``."""
        return replace(self, namespaces=tuple(namespaces))

    def with_component(self, component: Component) -> ControllerSettings:
        """A copy starting ``component``."""
        return replace(self, component=component)


def _ensure_rbac(api: client.ApiClient) -> None:
    """ClusterRole + binding for GROUP: watch nodes, list/delete pods, hold Leases."""
    rbac = client.RbacAuthorizationV1Api(api)
    role = {"metadata": {"name": ROLE}, "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "delete"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
         "verbs": ["get", "list", "watch", "create", "update", "patch"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
         "verbs": ["create", "patch"]}]}
    binding = {"metadata": {"name": ROLE},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": ROLE},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                             "name": GROUP}]}
    for create, body in ((rbac.create_cluster_role, role),
                         (rbac.create_cluster_role_binding, binding)):
        try:
            create(sweep.labelled(body))
        except client.ApiException as exc:
            if exc.status != 409:
                raise


class ControllerReplicas:
    """N replicas of the controller under test on ``cluster``; stop_all() ends them all."""

    def __init__(self, cluster: Cluster, settings: ControllerSettings, workdir: Path, *,
                 replicas: int = 2, prefix: str = REPLICA_PREFIX) -> None:
        settings.component.validate()
        self.cluster, self.settings, self.workdir = cluster, settings, workdir
        self.prefix = prefix
        """What every replica's identity (and audited user name) starts with."""
        self.identities = [f"{prefix}-{i}" for i in range(replicas)]
        self.records: dict[str, daemons.DaemonRecord] = {}
        self.api = kube.api_client(cluster.kubeconfig)
        self.secrets = runs.private_dir("controller")
        workdir.mkdir(parents=True, exist_ok=True)
        _ensure_rbac(self.api)
        sweep.track_named(cluster.kubeconfig, "Lease", settings.lease_namespace,
                          settings.lease_name)

    def kubeconfig(self, identity: str) -> Path:
        """The replica's own kubeconfig (issued once, in the run's private directory)."""
        path = self.secrets / f"{identity}.kubeconfig"
        if not path.is_file():
            self.cluster.client_kubeconfig(identity, (GROUP,), path)
        return path

    def start(self, identity: str) -> daemons.DaemonRecord:
        """Start replica ``identity`` (again)."""
        argv = self.settings.argv(kubeconfig=self.kubeconfig(identity), identity=identity)
        log = self.workdir / f"{identity}.log"
        started.note(started.of_command(self.settings.component, argv,
                                        env=self.settings.extra_env or None, log=log))
        # the process's temp files (e.g. the client's key files from the kubeconfig) go into
        # the run's private directory: a replica killed with SIGKILL cannot remove them itself
        scratch = self.secrets / f"tmp-{identity}"
        scratch.mkdir(mode=0o700, exist_ok=True)
        record = daemons.start(identity, argv, log,
                               env={"TMPDIR": str(scratch), **self.settings.extra_env})
        self.records[identity] = record
        return record

    def start_all(self) -> None:
        """Start every replica."""
        for identity in self.identities:
            self.start(identity)

    def alive(self, identity: str) -> bool:
        """True while the replica runs."""
        record = self.records.get(identity)
        return record is not None and daemons.alive(record)

    def signal(self, identity: str, sig: signal.Signals) -> None:
        """Send ``sig`` to a replica (SIGKILL, SIGTERM, SIGSTOP, SIGCONT)."""
        daemons.send(self.records[identity], sig)

    def node_of(self, identity: str) -> str:
        """The node the replica runs on: '' (host processes run on no node)."""
        return ""

    def cannot(self, verb: str) -> str | None:
        """Why the replicas cannot take ``verb`` (``VERBS``; None: they can)."""
        return None

    def wait_exit(self, identity: str, timeout_s: float) -> int | None:
        """Wait until the replica has exited on its own; its exit code."""
        record = self.records[identity]
        waiting.wait_for(lambda: (not daemons.alive(record), None),
                         what=f"{identity} to exit", timeout_s=timeout_s, interval_s=0.05)
        return daemons.exit_code(record)

    def holder(self) -> str:
        """The Lease's holderIdentity now ('' if free or absent)."""
        return kube.lease_holder(self.api, self.settings.lease_namespace, self.settings.lease_name)

    def wait_leader(self, timeout_s: float, *, not_: str = "") -> str:
        """Wait until one of the replicas (other than ``not_``) holds the Lease."""

        def probe() -> tuple[bool, str]:
            holder = self.holder()
            return holder in self.identities and holder != not_, holder

        return waiting.wait_for(probe, what="a controller replica to hold the Lease",
                                timeout_s=timeout_s, interval_s=0.1)

    def log(self, identity: str) -> str:
        """The replica's output so far."""
        return Path(self.records[identity].log).read_text(errors="replace")

    def stop_all(self) -> None:
        """SIGTERM every replica at once (SIGKILL after 10 s); returns when all are gone."""
        daemons.stop_together(list(self.records.values()), timeout_s=10)
