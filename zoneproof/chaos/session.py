"""Per-process state of chaostoolkit runs: the cluster, one Injector + Timeline per run.

``chaos run`` calls activities as plain functions in one process, so a run's state lives
here between calls: the control opens a run before the experiment and closes it after
(reverting every active fault and stopping every registered extra, also on failure or
Ctrl-C); an activity used without the control opens one lazily.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kubernetes import client

from zoneproof import cluster as clusters
from zoneproof import errors, runs
from zoneproof._util import kube
from zoneproof.chaos import k8s
from zoneproof.chaos.settings import Settings
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness.controller import REPLICA_PREFIX
from zoneproof.faults import Fault, FaultContext, FaultRecord, Injector
from zoneproof.measure import History, Recorder, Timeline
from zoneproof.runs import identity, sweep

__all__ = ["Extra", "Run", "close_run", "current", "find_cluster", "open_run"]

log = logging.getLogger(__name__)


class Extra(Protocol):
    """Something an activity started that must end with the run (controller, writer...)."""

    def stop(self) -> None:
        """Stop it; idempotent."""


@dataclass
class Run:
    """One experiment run: its cluster, timeline, injector and what its activities started."""

    settings: Settings
    cluster: Cluster
    timeline: Timeline
    injector: Injector
    workdir: Path
    api: client.ApiClient
    namespace: str
    """This run's workload namespace: ``<zoneproof_namespace>-<run id>``."""
    recorders: list[Recorder] = field(default_factory=list)
    extras: dict[str, Extra] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """What failed while closing the run (a revert, a stop): the verdict must fail."""
    identity: dict[str, Any] = field(default_factory=dict)
    """The cluster as reports name it (``runs.identity``)."""
    history: History | None = None
    """The register history of the run's traffic, once stopped (None: it ran none)."""
    replica_prefix: str = REPLICA_PREFIX
    """What the controller replicas' identities (and audited users) start with: the host
    replicas' prefix, or the in-cluster Deployment's pod-name prefix once deployed."""

    def start_fault(self, fault: Fault, max_duration_s: float,
                    context: FaultContext | None = None) -> tuple[str, ...]:
        """Inject ``fault`` acting on ``context`` (reverted at the latest when the run
        closes); its targets."""
        key = self.injector.start(fault, max_duration_s=max_duration_s, context=context)
        return self.injector.record(key).targets

    def stop_faults(self, kind: str = "") -> list[FaultRecord]:
        """Revert the active faults of ``kind`` (all when empty); their records."""
        return self.injector.revert_all(kind)

    def extra(self, key: str) -> Any:
        """The extra registered as ``key``; FaultError says which action registers it."""
        try:
            return self.extras[key]
        except KeyError:
            raise errors.FaultError(f"nothing registered as {key!r} in this run: call its "
                                    f"deploy/start action first") from None


class _State:
    run: Run | None = None


_lock = threading.RLock()
_state = _State()
_clusters: dict[tuple[str, str], Cluster] = {}


def _one_kubeconfig(settings: Settings) -> Path | None:
    """The kubeconfig as one file: a list (``a:b``, also from $KUBECONFIG) is flattened."""
    adopts = clusters.backend_type(settings.backend).traits.needs_kubeconfig
    value = str(settings.kubeconfig or "") or (os.environ.get("KUBECONFIG", "") if adopts else "")
    if not value:
        return None
    return k8s.flatten_kubeconfig(value, runs.private_dir("kubeconfig"))


def find_cluster(settings: Settings) -> Cluster:
    """The running cluster named by ``settings`` (cached per process)."""
    key = (settings.backend, settings.cluster)
    with _lock:
        if key not in _clusters:
            backend = clusters.get_backend(settings.backend, kubeconfig=_one_kubeconfig(settings),
                                           allow_destructive=settings.allow_destructive)
            found = backend.get(settings.cluster)
            if found is None:
                raise errors.BackendError(
                    f"no running {settings.backend} cluster {settings.cluster!r}: start it with "
                    f"`zoneproof up --name {settings.cluster}` or set configuration "
                    "zoneproof_cluster")
            _clusters[key] = found
        return _clusters[key]


def _workdir(settings: Settings) -> Path:
    if settings.workdir is not None:
        base = settings.workdir
    else:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        base = Path.cwd() / "zoneproof-chaos" / stamp
    base.mkdir(parents=True, exist_ok=True)
    return base


def open_run(configuration: dict[str, Any] | None) -> Run:
    """Start a new run (closing a leftover one first)."""
    settings = Settings.from_configuration(configuration)
    with _lock:
        close_run()
        cluster = find_cluster(settings)
        timeline = Timeline()
        sweep.track(cluster.kubeconfig)
        tested = identity.identify(cluster)
        identity.record(tested)
        run = Run(settings, cluster, timeline, Injector(cluster, timeline),
                  _workdir(settings), kube.api_client(cluster.kubeconfig),
                  f"{settings.namespace}-{uuid.uuid4().hex[:6]}", identity=tested.to_dict())
        _state.run = run
        log.info("chaos run on cluster %s; artefacts in %s", cluster.name, run.workdir)
        return run


def current(configuration: dict[str, Any] | None) -> Run:
    """The open run, or a new one for ``configuration``."""
    with _lock:
        return _state.run if _state.run is not None else open_run(configuration)


def close_run() -> Run | None:
    """Revert every active fault, stop every extra and recorder; the closed run (or None).

    Every step runs even if an earlier one fails; failures land in ``Run.problems``.
    """
    with _lock:
        run, _state.run = _state.run, None
    if run is None:
        return None
    steps: list[tuple[str, Callable[[], object]]] = [
        ("revert faults", run.injector.revert_all),
        *((f"stop {key}", extra.stop) for key, extra in reversed(run.extras.items())),
        *((f"stop {type(r).__name__}", r.stop) for r in reversed(run.recorders))]
    for step, undo in steps:
        try:
            undo()
        except Exception as exc:  # kept in run.problems (fails the verdict): all steps run
            log.error("closing the chaos run: %s failed: %s", step, exc)
            run.problems.append(f"{step}: {type(exc).__name__}: {exc}")
    run.extras.clear()
    run.recorders.clear()
    return run
