"""The kind backend: makes, finds and deletes kind clusters ``zp-<name>`` with the ``kind`` binary.

Every cluster has a state directory (``<state root>/kind/<name>/``: spec, rendered config,
kubeconfig, audit log, kind's log) written before kind starts, so ``delete`` finds it after
a crash; ``delete`` never touches a kind cluster without that directory (a user's).
Creation is a pipeline of named steps; a failed or interrupted one deletes the cluster
unless told to keep it, and a readiness timeout is an error (kind's own wait only warns).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import tenacity

from zoneproof import errors
from zoneproof._util import files, processes
from zoneproof.cluster import audit_policy, replica_guard
from zoneproof.cluster._common import StateDirBackend, Step, no_interrupts, run_creation
from zoneproof.cluster.interface import BackendConfig, Progress, Traits
from zoneproof.cluster.kind import config, docker, tools
from zoneproof.cluster.kind.cluster import CAPABILITIES, NAME, KindCluster, KindPaths
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import ownership, state

__all__ = ["KindBackend"]

_CREATE_TIMEOUT_S = 900.0
#: ``kind delete cluster`` tries: docker sometimes cannot kill a node container at once
#: ("tried to kill container, but did not receive an exit event": slow to exit under load).
#: A node whose nested ``runc init`` hangs in uninterruptible sleep is never killed: the
#: last failure then names it.
_DELETE_TRIES = 3
_DELETE_PAUSE_S = 5.0
#: kind gives each node container a fixed 30 s to log its boot line (systemd's "Reached
#: target Multi-User System", or "detected cgroup v1"); under load one can miss it (CI: 7
#: nodes booting beside a running cluster on 2 cores). Such a create is deleted and tried
#: again from nothing, up to this many times; any other failure is final at once.
_CREATE_TRIES = 3
_BOOT_TIMED_OUT = "could not find a log line that matches"


def _missing_images(spec: ClusterSpec, image: str) -> list[str]:
    """What kind would otherwise try to pull (and cannot, offline), with the fix."""
    found = []
    if not docker.image_exists(image):
        found.append(f"the kind node image {image} is not in docker's image store, and nothing "
                     "is pulled here: build it with `zoneproof build --node-image` (or set "
                     f"{tools.IMAGE_ENV} to a node image you have)")
    balancer = tools.LOAD_BALANCER_IMAGE
    if spec.etcd_members > 1 and not docker.image_exists(balancer):
        found.append(f"{spec.etcd_members} control-plane nodes need kind's load balancer image "
                     f"{balancer}, which is not in docker's image store, and nothing is pulled "
                     "here: `zoneproof build --node-image` makes it (zoneproof's TCP load "
                     "balancer under that name)")
    return found


class KindBackend(StateDirBackend[KindPaths, KindCluster]):
    """Makes kind clusters ``zp-<name>`` with the offline node image."""

    name = NAME
    traits = Traits(
        summary="kind clusters (real kubelets in containers) from the offline node image; "
                "etcd members = control-plane nodes (1, or 3 for an HA control plane)",
        makes_clusters=True, default_etcd_members=1, capabilities=CAPABILITIES,
        tests_marker="kind",
        # A 3-control-plane kind on 2 cores carries ~90-115 ops/s of register traffic in all
        # (92.1 with 8 clients in CI, 90.6 with 16 under load): 100 would void by chance.
        history_min_rate_ops_s=60.0)
    paths_type = KindPaths
    cluster_type = KindCluster

    @classmethod
    def from_config(cls, config: BackendConfig) -> KindBackend:
        """The kind backend (it takes no options)."""
        return cls()

    def prepare(self, progress: Progress) -> None:
        """Nothing ahead: ``create`` checks docker, kind and the node image itself."""

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> KindCluster:
        """Bring up ``spec`` as kind cluster ``zp-<name>`` (a no-op if it already runs)."""
        spec.validate()
        docker.ensure_daemon()
        kind = tools.kind_binary(progress)
        image = tools.node_image()
        if (existing := self._existing(spec, progress)) is not None:
            return existing
        if missing := _missing_images(spec, image):
            raise errors.ProvisionError("; and ".join(missing))
        made = ownership.claim(self.name, spec.name)
        try:
            paths = self._allocate(spec, image, made)
        except BaseException:
            ownership.unclaim(self.name, spec.name)
            raise
        cluster = KindCluster(paths)
        count = spec.etcd_members + spec.nodes_per_zone * len(spec.zones)
        steps: list[Step] = [
            (f"kind create cluster {cluster.kind_name}: {spec.etcd_members} control plane, "
             f"{count - spec.etcd_members} workers in {', '.join(spec.zones)} (log: "
             f"{paths.create_log})", lambda: self._kind_create(kind, cluster, keep_on_failure, progress)),
            (f"waiting for {count} nodes Ready and the default ServiceAccount", cluster.wait_ready),
            replica_guard.step(paths.kubeconfig),
        ]
        try:
            seconds = run_creation(
                steps, what=f"kind cluster {cluster.kind_name!r}", progress=progress,
                keep_on_failure=keep_on_failure, teardown=lambda: self._teardown(paths, progress),
                kept_hint=f"`kind export logs --name {cluster.kind_name}`; remove it with "
                          f"`zoneproof down --backend kind --cluster-name {spec.name}`")
        except BaseException:
            if keep_on_failure:  # kept for debugging: no longer the run's to remove
                ownership.unclaim(self.name, spec.name)
            raise
        data = state.read_json(paths.state)
        data[ownership.STATE_KEY] = ownership.settle(self.name, spec.name, made).to_dict()
        state.write_json(paths.state, data)
        progress(f"cluster {spec.name!r} (kind {cluster.kind_name}) up in {seconds:.1f}s; "
                 f"kubeconfig: {paths.kubeconfig}")
        return cluster

    def _existing(self, spec: ClusterSpec, progress: Progress) -> KindCluster | None:
        kind_name = config.cluster_name(spec.name)
        cluster = self.get(spec.name)
        found = docker.containers(f"{docker.CLUSTER_LABEL}={kind_name}")
        if cluster is None:
            if found:
                raise errors.ProvisionError(
                    f"a kind cluster named {kind_name!r} exists but zoneproof has no state of "
                    "it, so it is not zoneproof's to reuse or delete: pick another --cluster-name, or "
                    f"remove it yourself with `kind delete cluster --name {kind_name}`")
            if self.paths(spec.name).root.exists():
                raise errors.ProvisionError(
                    f"{self.paths(spec.name).root} exists without a state file (an interrupted "
                    f"up?): run `zoneproof down --backend kind --cluster-name {spec.name}` first")
            return None
        stopped = sorted(n for n, up in found.items() if not up)
        if not found or stopped:
            raise errors.ProvisionError(
                f"kind cluster {kind_name!r} is not running (node containers "
                f"{'missing' if not found else f'stopped: {stopped}'}); run `zoneproof down "
                f"--backend kind --name {spec.name}` and then up again")
        if cluster.spec != spec:
            raise errors.ProvisionError(
                f"cluster {spec.name!r} is already up with another spec ({cluster.spec}); run "
                f"`zoneproof down --backend kind --cluster-name {spec.name}` first, or pick "
                "another --cluster-name")
        progress(f"cluster {spec.name!r} is already up; kubeconfig: {cluster.kubeconfig}")
        return cluster


    def _allocate(self, spec: ClusterSpec, image: str, made: ownership.Ownership) -> KindPaths:
        """State directory (0700): spec, ownership, rendered config, audit policy; written
        before kind runs."""
        paths = self.paths(spec.name)
        try:
            files.private_dir(self.root())
            paths.root.mkdir(mode=files.DIR_MODE)
            paths.audit_dir.mkdir()
        except OSError as exc:
            raise errors.ConfigError(f"cannot create {paths.root} ({exc.strerror}): set "
                                     "ZONEPROOF_STATE to a writable directory") from exc
        paths.audit_policy.write_text(audit_policy.audit_policy_yaml())
        audit = config.AuditMounts(policy_file=str(paths.audit_policy),
                                   log_dir=str(paths.audit_dir))
        doc = config.render(spec, cgroup_v1=docker.cgroup_v1(), audit=audit)
        paths.config.write_text(config.to_yaml(doc, header=f"zoneproof cluster {spec.name}"))
        state.write_json(paths.state, {"spec": spec.to_dict(), "image": image,
                                       "kind_name": config.cluster_name(spec.name),
                                       ownership.STATE_KEY: made.to_dict()})
        return paths

    def _kind_create(self, kind: Path, cluster: KindCluster, retain: bool,
                     progress: Progress) -> None:
        docker.ensure_network()
        argv = [str(kind), "create", "cluster", "--name", cluster.kind_name,
                "--config", str(cluster.paths.config), "--image", cluster.image,
                "--kubeconfig", str(cluster.paths.kubeconfig), "--wait", "0s"]
        kind_create([*argv, "--retain"] if retain else argv, log_file=cluster.paths.create_log,
                    delete=[str(kind), "delete", "cluster", "--name", cluster.kind_name,
                            "--kubeconfig", str(cluster.paths.kubeconfig)],
                    progress=progress)

    def delete(self, name: str, *, progress: Progress) -> bool:
        """Delete kind cluster ``zp-<name>`` and its state; False if zoneproof has none."""
        paths = self.paths(name)
        if not paths.root.exists():
            return False
        self._teardown(paths, progress)
        return True

    def _teardown(self, paths: KindPaths, progress: Progress) -> None:
        with no_interrupts():
            started = time.monotonic()
            kind_name = config.cluster_name(paths.root.name)
            kind_delete([str(tools.kind_binary(progress)), "delete", "cluster", "--name", kind_name,
                         "--kubeconfig", str(paths.kubeconfig)])
            if docker.remove_network_if_unused():
                progress(f"removed docker network {docker.NETWORK} (no cluster uses it)")
            shutil.rmtree(paths.root, ignore_errors=True)
            ownership.unclaim(self.name, paths.root.name)
            progress(f"deleted kind cluster {kind_name} in {time.monotonic() - started:.1f}s")


def kind_create(argv: Sequence[str], *, log_file: Path, delete: Sequence[str],
                progress: Progress, env: Mapping[str, str] | None = None) -> None:
    """Run ``kind create cluster`` (with ``env``, zoneproof's docker network by default);
    when a node missed kind's boot wait, delete what it made (``delete``) and run it again,
    up to ``_CREATE_TRIES`` times; the last failure is raised."""
    env = tools.kind_env() if env is None else env

    def boot_timed_out(exc: BaseException) -> bool:
        return isinstance(exc, processes.CommandError) and _BOOT_TIMED_OUT in exc.output

    def again(state: tenacity.RetryCallState) -> None:
        progress(f"a node container did not log its boot within kind's 30 s (a loaded machine); "
                 f"deleting it and creating again (try {state.attempt_number + 1} of "
                 f"{_CREATE_TRIES}); the failed try's log: {log_file}.{state.attempt_number}")
        shutil.copyfile(log_file, f"{log_file}.{state.attempt_number}")
        kind_delete(delete)

    for attempt in tenacity.Retrying(stop=tenacity.stop_after_attempt(_CREATE_TRIES),
                                     retry=tenacity.retry_if_exception(boot_timed_out),
                                     before_sleep=again, reraise=True):
        with attempt:
            processes.run(argv, env=env, log_file=log_file, timeout_s=_CREATE_TIMEOUT_S)


def kind_delete(argv: Sequence[str]) -> None:
    """Run ``kind delete cluster`` (idempotent), again after a pause when it fails, up to
    ``_DELETE_TRIES`` times; the last failure is raised."""
    for attempt in tenacity.Retrying(stop=tenacity.stop_after_attempt(_DELETE_TRIES),
                                     wait=tenacity.wait_fixed(_DELETE_PAUSE_S),
                                     retry=tenacity.retry_if_exception_type(
                                         processes.CommandError), reraise=True):
        with attempt:
            processes.run(argv, env=tools.kind_env(), timeout_s=_CREATE_TIMEOUT_S)
