"""Before an experiment touches anything: its run, and everything it needs checked up front.

``chaos run`` is a zoneproof run of its own (``zoneproof.runs``: a killed run is
cleaned up by its keeper) unless the process already belongs to one (pytest runs
experiments in-process); SIGTERM interrupts it like Ctrl-C. ``needs`` reads the whole
experiment — every fault action in its method and rollbacks — so that a cluster that
cannot or must not take one of them (a user's cluster without
``zoneproof_allow_destructive``, a backend without kubelets to stop) is refused before the
first action deploys anything. Each ``inject_fault`` activity names a registered fault kind
(``faults.registry``), whose ``requires`` says what it needs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from zoneproof import errors, runs
from zoneproof._util import reaping
from zoneproof.chaos import actions
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster, Progress

__all__ = ["ACTIONS_MODULE", "actions_of", "begin", "check", "end", "needs"]

ACTIONS_MODULE = "zoneproof.chaos.actions"


def actions_of(experiment: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(activity name, provider) of every activity of ours in the method and rollbacks."""
    for section in ("method", "rollbacks"):
        for activity in experiment.get(section) or []:
            provider = activity.get("provider") or {}
            if provider.get("module") == ACTIONS_MODULE:
                yield str(activity.get("name", provider.get("func", ""))), provider


def needs(experiment: Mapping[str, Any]) -> dict[str, frozenset[Capability]]:
    """Fault activity name → what it needs of the cluster (every fault disrupts it:
    DESTRUCTIVE, plus its kind's ``requires``). ConfigError for an unknown fault."""
    found = {}
    for name, provider in actions_of(experiment):
        fault = actions.planned_fault(str(provider.get("func", "")),
                                      provider.get("arguments") or {})
        if fault is not None:
            found[name] = fault.requires | {Capability.DESTRUCTIVE}
    return found


def check(experiment: Mapping[str, Any], cluster: Cluster) -> None:
    """FaultError (naming the activities, what is missing and who has it) unless ``cluster``
    can take every fault of ``experiment``."""
    wanted = needs(experiment)
    if not wanted:
        return
    everything = frozenset().union(*wanted.values())
    title = experiment.get("title", "the experiment")
    try:
        facets.require(cluster, everything,
                       what=f"experiment {title!r} (fault actions: {', '.join(wanted)}), "
                            "refused before any of its actions ran,")
    except errors.FaultError as exc:
        hint = (" (in an experiment: configuration zoneproof_allow_destructive: true)"
                if Capability.DESTRUCTIVE in everything - cluster.capabilities else "")
        raise errors.FaultError(f"{exc}{hint}") from None


class _Opened:
    run: runs.Run | None = None


_opened = _Opened()


def begin(progress: Progress) -> None:
    """SIGTERM takes Ctrl-C's path from here on (chaoslib's own handler raises inside the
    running activity, which then merely fails: the experiment went on and ended
    "completed"); open a run for this chaos run unless the process already belongs to one
    (after reaping what dead runs left)."""
    reaping.interrupt_on_terminate()
    if runs.current() is not None:
        return
    for problem in runs.reap_dead(progress):
        progress(f"warning: {problem}")
    _opened.run = runs.open_run("chaos")


def end(progress: Progress) -> list[str]:
    """Close the run ``begin`` opened (undoing what is still held); the problems met."""
    if _opened.run is None:
        return []
    _opened.run = None
    return runs.close(progress)
