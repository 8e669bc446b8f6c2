"""The experiment run this process is in, between chaostoolkit's calls of the activities.

chaostoolkit calls activities as plain functions, so the run the control opens before the
experiment (``open_run``) is this module's ``current`` until the control closes it after
(``close_run``: every fault reverted and everything the activities started stopped, also on
failure or Ctrl-C). An ``ExperimentRun`` belongs to a zoneproof run (``zoneproof.runs``):
the process's own (pytest runs experiments in-process) or one it opens (``chaos run``),
which ``ExperimentRun.end`` closes.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zoneproof import cluster as clusters
from zoneproof import errors, runs
from zoneproof._util import kube, reaping
from zoneproof._util.progress import Progress
from zoneproof.chaos import guard, k8s
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.chaos.experiment import ExperimentRun
from zoneproof.cluster.interface import Cluster
from zoneproof.faults import Fault
from zoneproof.runs import identity, sweep

__all__ = ["close_run", "current", "open_run", "planned_fault"]

log = logging.getLogger(__name__)


class _Open:
    run: ExperimentRun | None = None


#: The open run (chaostoolkit's activities reach it only here).
_open = _Open()


def _one_kubeconfig(config: ExperimentConfig) -> Path | None:
    """The kubeconfig as one file: a list (``a:b``, also from $KUBECONFIG) is flattened."""
    adopts = clusters.backend_type(config.backend).traits.needs_kubeconfig
    value = str(config.kubeconfig or "") or (os.environ.get("KUBECONFIG", "") if adopts else "")
    if not value:
        return None
    return k8s.flatten_kubeconfig(value, runs.private_dir("kubeconfig"))


def _find_cluster(config: ExperimentConfig) -> Cluster:
    """The running cluster named by ``config``."""
    backend = clusters.get_backend(config.backend, kubeconfig=_one_kubeconfig(config),
                                   allow_destructive=config.allow_destructive)
    found = backend.get(config.cluster)
    if found is None:
        raise errors.BackendError(
            f"no running {config.backend} cluster {config.cluster!r}: start it with "
            f"`zoneproof up --cluster-name {config.cluster}` or set configuration zoneproof_cluster")
    return found


def _workdir(config: ExperimentConfig) -> Path:
    if config.workdir is not None:
        base = config.workdir
    else:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        base = Path.cwd() / "zoneproof-chaos" / stamp
    base.mkdir(parents=True, exist_ok=True)
    return base


def _open_zoneproof_run(progress: Progress) -> runs.Run | None:
    """A zoneproof run for this chaos run (None: the process is in one already, e.g.
    pytest's), after reaping what dead runs left. SIGTERM takes Ctrl-C's path from here on
    (chaoslib's own handler raises inside the running activity, which then merely fails:
    the experiment went on and ended "completed")."""
    reaping.interrupt_on_terminate()
    if runs.current() is not None:
        return None
    for problem in runs.reap_dead(progress):
        progress(f"warning: {problem}")
    return runs.open_run("chaos")


def open_run(experiment: Mapping[str, Any], configuration: Mapping[str, Any] | None,
             progress: Progress) -> ExperimentRun:
    """Check ``experiment`` (its configuration, every fault it injects, that the cluster can
    take them: ``guard``), then open its run (closing a leftover one first). ZoneproofError
    before the experiment touches anything; nothing is left open then."""
    config = ExperimentConfig.from_configuration(configuration)
    plan = guard.FaultPlan.of(experiment)
    if (leftover := close_run()) is not None:
        leftover.end(progress)
    opened = _open_zoneproof_run(progress)
    try:
        cluster = _find_cluster(config)
        guard.check(plan, cluster, str(experiment.get("title", "the experiment")))
        sweep.track(cluster.kubeconfig)
        tested = identity.identify(cluster)
        identity.record(tested)
        run = ExperimentRun(config, cluster, kube.api_client(cluster.kubeconfig),
                            _workdir(config), plan, opened=opened)
    except BaseException:
        if opened is not None:
            for problem in runs.close(progress):
                progress(f"warning: {problem}")
        raise
    run.identity = tested.to_dict()
    _open.run = run
    log.info("chaos run on cluster %s; artefacts in %s", cluster.name, run.workdir)
    return run


def current() -> ExperimentRun:
    """The open run; ConfigError if the experiment does not declare the zoneproof control."""
    if _open.run is None:
        raise errors.ConfigError(
            "no zoneproof experiment run is open: declare the zoneproof control in the "
            "experiment (controls: [{name: zoneproof, provider: {type: python, module: "
            "zoneproof.chaos.control}}])")
    return _open.run


def planned_fault(fault: str, parameters: Mapping[str, Any] | None) -> Fault:
    """The fault ``inject_fault`` injects for these arguments: the one the open run planned
    (built when the experiment was checked), else built now (ConfigError names the fix)."""
    plan = _open.run.plan if _open.run is not None else guard.FaultPlan({})
    return plan.fault(fault, parameters)


def close_run() -> ExperimentRun | None:
    """Close the open run (``ExperimentRun.close``); the closed run (None: none was open)."""
    run, _open.run = _open.run, None
    if run is not None:
        run.close()
    return run
