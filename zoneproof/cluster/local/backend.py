"""The local backend: etcd ×N, kube-apiserver, kcm, scheduler and kwok as host processes.

Creation is a pipeline of named steps; every started process is recorded in the cluster's
state file at once (pid + start time) and carries the bed's uid in its environment
(``reaping.BED_ENV``), so ``delete`` (``zoneproof down``) finds exactly the bed's processes
even after a crash, and nothing else. A failed or interrupted ``create`` tears down what it
started unless told to keep it; a partial bed (processes that stopped) is repaired by
``create`` unless a live run is disturbing it on purpose.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
import signal
import time

import filelock

from zoneproof import binaries as binaries_
from zoneproof import errors
from zoneproof._util import daemons, files, reaping
from zoneproof._util import ports as free_ports
from zoneproof.cluster import audit_policy, replica_guard
from zoneproof.cluster._common import (
    StateDirBackend,
    no_interrupts,
    run_creation,
)
from zoneproof.cluster.interface import (
    BackendConfig,
    ControlPlaneProcess,
    Progress,
    Traits,
)
from zoneproof.cluster.local import netns, pki, ports, render
from zoneproof.cluster.local import options as options_
from zoneproof.cluster.local.cluster import (
    _CAPABILITIES,
    _STOP_TIMEOUT_S,
    NAME,
    ZONED_CAPABILITIES,
    LocalCluster,
)
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import ownership, state

__all__ = ["LocalBackend", "LocalCluster"]

log = logging.getLogger(__name__)

_TIERS = (("kwok-", signal.SIGTERM), (ControlPlaneProcess.SCHEDULER.value, signal.SIGTERM),
          (ControlPlaneProcess.CONTROLLER_MANAGER.value, signal.SIGTERM), ("lb", signal.SIGKILL),
          (ControlPlaneProcess.APISERVER.value, signal.SIGTERM), ("etcd-", signal.SIGKILL),
          ("toxiproxy-", signal.SIGKILL))


def open_cluster(paths: render.BedPaths) -> LocalCluster:
    """The bed at ``paths``, as its layout (flat or zoned) has it."""
    cluster = LocalCluster(paths)  # checks the state file (ProvisionError when not ours)
    if cluster.options.layout == "zones":
        from zoneproof.cluster.local import zoned  # it builds on LocalCluster

        return zoned.ZonedLocalCluster(paths)
    return cluster


class LocalBackend(StateDirBackend[render.BedPaths, LocalCluster]):
    """Makes local beds under ``<state root>/local/<name>``, laid out by ``options``."""

    name = NAME
    traits = Traits(
        summary="etcd, control plane and kwok nodes as processes on this host",
        makes_clusters=True, default_etcd_members=3,
        capabilities=_CAPABILITIES | ZONED_CAPABILITIES, zoned_capabilities=ZONED_CAPABILITIES,
        # where this process cannot make network namespaces, it makes no zoned beds
        zoned_options={"layout": "zones"} if netns.available() is None else None,
        options=options_.OPTIONS, holds_nodes_at_scale=True)
    paths_type = render.BedPaths
    cluster_type = staticmethod(open_cluster)

    def __init__(self, options: options_.LocalOptions | None = None) -> None:
        self.options = (options or options_.LocalOptions()).validate()
        if self.options.layout == "zones" and (why := netns.available()) is not None:
            log.warning("%s: falling back to the flat layout (the control plane in no zone; "
                        "no zone faults)", why)
            self.options = dataclasses.replace(self.options, layout="flat")

    @classmethod
    def from_config(cls, config: BackendConfig) -> LocalBackend:
        """A local backend with ``config.options`` (``port-base``, ``kwok-per``)."""
        return cls(options_.LocalOptions.parse(config.options))

    def prepare(self, progress: Progress) -> None:
        """Build or find the pinned binaries (once, before parallel test workers need them)."""
        binaries_.resolve_all(progress=progress)

    def create(self, spec: ClusterSpec, *, progress: Progress, keep_on_failure: bool = False
               ) -> LocalCluster:
        """Bring up ``spec`` (idempotent if the same bed already runs)."""
        spec.validate()
        if (existing := self._existing(spec, progress)) is not None:
            return existing
        bins = binaries_.resolve_all(progress=progress)
        made = ownership.claim(self.name, spec.name)
        try:
            paths = self._allocate(spec, made)
        except BaseException:
            ownership.unclaim(self.name, spec.name)
            raise
        cluster = open_cluster(paths)
        steps = [*cluster.creation_steps(bins), replica_guard.step(paths.kubeconfig)]
        try:
            seconds = run_creation(
                steps, what=f"local cluster {spec.name!r}", progress=progress,
                keep_on_failure=keep_on_failure, teardown=lambda: self._teardown(paths, progress),
                kept_hint=f"logs: {paths.logs}; remove it with `zoneproof down --cluster-name {spec.name}`")
        except BaseException:
            if keep_on_failure:  # kept for debugging: no longer the run's to remove
                ownership.unclaim(self.name, spec.name)
            raise
        cluster.set_ownership(ownership.settle(self.name, spec.name, made))
        progress(f"cluster {spec.name!r} up in {seconds:.1f}s; kubeconfig: {paths.kubeconfig}")
        return cluster


    def _existing(self, spec: ClusterSpec, progress: Progress) -> LocalCluster | None:
        """The bed ``spec`` names if it is up (repaired if partial); None if there is none.

        ProvisionError (with the fix) for a directory zoneproof did not make, a bed being
        made by another process, one with another spec, or one a live run is faulting.
        """
        cluster = self.get(spec.name)
        if cluster is None:
            if self.paths(spec.name).root.exists():
                raise errors.ProvisionError(
                    f"{self.paths(spec.name).root} exists but is not a bed zoneproof made (no "
                    "state.json): zoneproof leaves it alone; move it away or pick another --cluster-name")
            return None
        health, reason = ownership.judge(cluster.ownership, cluster.liveness())
        if health is ownership.Health.STARTING:
            raise errors.ProvisionError(
                f"cluster {spec.name!r} is {reason}: wait for it, or stop that process and run "
                f"`zoneproof down --cluster-name {spec.name}`")
        if health is ownership.Health.LEAKED and not cluster.ownership.complete:
            progress(f"cluster {spec.name!r}: {reason}: removing what it left")
            self._teardown(cluster.paths, progress)
            return None
        if (cluster.spec, cluster.options) != (spec, self.options):
            raise errors.ProvisionError(
                f"cluster {spec.name!r} is already up with another spec ({cluster.spec}, "
                f"{cluster.options}); run `zoneproof down --cluster-name {spec.name}` first, or pick "
                "another --cluster-name")
        if health is not ownership.Health.HEALTHY:
            if (holder := ownership.faulting_run(NAME, spec.name)) is not None:
                raise errors.ProvisionError(
                    f"cluster {spec.name!r} is {health} ({reason}) because run {holder} is "
                    "faulting it: wait until that run ends (it restores the bed), or end it")
            try:
                cluster.repair(progress)
            except errors.ZoneproofError as exc:
                raise errors.ProvisionError(
                    f"cluster {spec.name!r} is {health} ({reason}) and could not be repaired: "
                    f"{exc}; remove it with `zoneproof down --cluster-name {spec.name}` and up again"
                ) from exc
            progress(f"cluster {spec.name!r} repaired; kubeconfig: {cluster.kubeconfig}")
            return cluster
        progress(f"cluster {spec.name!r} is already up; kubeconfig: {cluster.kubeconfig}")
        return cluster

    def _allocate(self, spec: ClusterSpec, made: ownership.Ownership) -> render.BedPaths:
        """Pick ports (a zoned bed: its network); make the bed's directory (0700, never an
        existing one) with its state (ownership first), PKI and kubeconfigs; under a global
        lock."""
        root = self.root()
        # slow (RSA): before the ports are chosen (a zoned bed's network reserved), not after
        network, keys = self._network_and_keys(spec)
        try:
            files.private_dir(root)
        except OSError as exc:
            self._release(network)
            raise errors.ConfigError(f"state directory {root} is not writable ({exc.strerror}):"
                                     " set ZONEPROOF_STATE to a writable directory") from exc
        except BaseException:
            self._release(network)
            raise
        with filelock.FileLock(str(root / "ports.lock")):
            if network is None:
                reserved = {p for name in self.names() for p in self._ports_of(name)}
                base = free_ports.choose_base(ports.ports_needed(spec.etcd_members),
                                              explicit=self.options.port_base, reserved=reserved)
                bed_ports = ports.Ports.from_base(base, spec.etcd_members)
            else:
                bed_ports = ports.Ports((), (), 0, 0, 0)
            paths = self.paths(spec.name)
            try:
                paths.root.mkdir(mode=files.DIR_MODE)
            except FileExistsError:
                self._release(network)
                raise errors.ProvisionError(
                    f"{paths.root} appeared meanwhile (another `zoneproof up --cluster-name "
                    f"{spec.name}`?): zoneproof leaves it alone; pick another --cluster-name") from None
            data = {"spec": spec.to_dict(), "ports": bed_ports.to_dict(),
                    "options": self.options.to_dict(), "processes": {},
                    ownership.STATE_KEY: made.to_dict()}
            if network is not None:
                from zoneproof.cluster.local import zoned

                data["network"] = zoned.network_state(network)
            state.write_json(paths.state, data)
            pki.write(paths, keys)
            files.private_dir(paths.logs)
            files.write_private(paths.audit_policy, audit_policy.audit_policy_yaml())
            if network is not None:
                zoned.write_kubeconfigs(spec, network, paths)
                return paths
            files.write_private(paths.kubeconfig,
                                render.kubeconfig_yaml(spec.name, bed_ports.apiserver, paths))
            files.write_private(paths.kwok_kubeconfig, render.kubeconfig_yaml(
                spec.name, bed_ports.apiserver, paths, cert="kwok"))
        return paths

    def _network_and_keys(self, spec: ClusterSpec) -> tuple[netns.ZoneNetwork | None, pki.Pki]:
        """A zoned bed's network, reserved (None for the flat layout), and the bed's keys."""
        if self.options.layout != "zones":
            return None, pki.make(())
        if spec.etcd_members != len(spec.zones):
            raise errors.ConfigError(
                f"the zoned layout runs one etcd member per zone: --etcd-members "
                f"{spec.etcd_members} must equal the number of zones ({len(spec.zones)})")
        return netns.allocate(spec.zones, lambda network: pki.make(network.addresses()))

    @staticmethod
    def _release(network: netns.ZoneNetwork | None) -> None:
        if network is not None:
            network.delete()

    def _ports_of(self, name: str) -> list[int]:
        cluster = self.get(name)
        return cluster.ports.all() if cluster is not None else []

    def delete(self, name: str, *, progress: Progress) -> bool:
        """Stop the processes bed ``name`` started and remove its directory; False if there
        is none. ConfigError for an invalid name; ProvisionError for a directory zoneproof
        did not make (it is left alone)."""
        paths = self.paths(name)
        if not paths.root.exists():
            return False
        if not paths.state.is_file():
            with contextlib.suppress(OSError):
                paths.root.rmdir()  # an empty directory (a creator killed at birth)
                progress(f"removed empty directory {paths.root}")
                return True
            raise errors.ProvisionError(
                f"{paths.root} is not a bed zoneproof made (no state.json): nothing removed")
        self._teardown(paths, progress)
        return True

    def _teardown(self, paths: render.BedPaths, progress: Progress) -> None:
        """Stop exactly the bed's processes (recorded pid + start time; then any process
        carrying its uid, started but not recorded), remove its directory, drop its hold."""
        with no_interrupts():
            started = time.monotonic()
            records: dict[str, daemons.DaemonRecord] = {}
            uid = ""
            cluster: LocalCluster | None = None
            if paths.state.is_file():
                cluster = open_cluster(paths)
                records, uid = cluster.records(), cluster.ownership.uid
            for prefix, sig in _TIERS:
                daemons.stop_together([r for n, r in records.items() if n.startswith(prefix)],
                                      timeout_s=_STOP_TIMEOUT_S, sig=sig)
            if uid:
                for stray in reaping.terminate(reaping.with_token(reaping.BED_ENV, uid),
                                               grace_s=_STOP_TIMEOUT_S):
                    progress(f"stopped unrecorded process {stray.pid} of {paths.root.name}")
            if cluster is not None and (removed := cluster.release_network()):
                progress(f"removed network namespaces {', '.join(removed)}")
            shutil.rmtree(paths.root, ignore_errors=True)
            ownership.unclaim(self.name, paths.root.name)
            progress(f"removed {paths.root} in {time.monotonic() - started:.1f}s")
