"""Before an experiment touches anything: the faults it injects, and whether the cluster
can and may take them.

``FaultPlan.of`` builds the fault of every ``inject_fault`` activity in the method and the
rollbacks once (``faults.registry.build``: an unknown fault or parameter is refused before
the run starts); ``check`` refuses a cluster that cannot or must not take one of them (a
user's cluster without ``zoneproof_allow_destructive``, a backend without kubelets to stop)
before the first action deploys anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from zoneproof import errors
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, Cluster
from zoneproof.faults import Fault, registry

__all__ = ["ACTIONS_MODULE", "DISRUPTING", "INJECT", "FaultPlan", "actions_of", "check", "needs"]

ACTIONS_MODULE = "zoneproof.chaos.actions"
#: The one activity that injects faults.
INJECT = "inject_fault"
#: Activities that disrupt what runs without a fault of their own: a voluntary disruption
#: that must go unnoticed (a rolling restart of the webhook), checked by the activity itself.
DISRUPTING = frozenset({"restart_webhook"})


def actions_of(experiment: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(activity name, provider) of every activity of ours in the method and rollbacks."""
    for section in ("method", "rollbacks"):
        for activity in experiment.get(section) or []:
            provider = activity.get("provider") or {}
            if provider.get("module") == ACTIONS_MODULE:
                yield str(activity.get("name", provider.get("func", ""))), provider


def _key(fault: str, parameters: Mapping[str, Any] | None) -> str:
    return json.dumps([fault, dict(parameters or {})], sort_keys=True, default=str)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Activity name → the fault it injects, each built once from its arguments."""

    faults: Mapping[str, Fault]
    by_arguments: Mapping[str, Fault] = field(default_factory=dict)
    """The same faults by their ``inject_fault`` arguments."""
    disruptions: tuple[str, ...] = ()
    """The ``DISRUPTING`` activities' names."""

    @classmethod
    def of(cls, experiment: Mapping[str, Any]) -> FaultPlan:
        """The faults of ``experiment``'s ``inject_fault`` activities; ConfigError naming
        every activity whose fault is not registered or whose parameters its kind does not
        take (chaoslib checks only the action's own)."""
        faults, built, problems, disruptions = {}, {}, [], []
        for name, provider in actions_of(experiment):
            if provider.get("func") in DISRUPTING:
                disruptions.append(name)
            if provider.get("func") != INJECT:
                continue
            arguments = provider.get("arguments") or {}
            fault, parameters = str(arguments.get("fault", "")), arguments.get("parameters")
            try:
                faults[name] = built[_key(fault, parameters)] = registry.build(fault, parameters)
            except errors.ConfigError as exc:
                problems.append(f"activity {name!r}: {exc}")
        if problems:
            raise errors.ConfigError("; ".join(problems))
        return cls(faults, built, tuple(disruptions))

    def fault(self, fault: str, parameters: Mapping[str, Any] | None) -> Fault:
        """The fault ``inject_fault(fault, parameters)`` injects: the planned one, else one
        built now (arguments chaostoolkit substituted at run time)."""
        planned = self.by_arguments.get(_key(fault, parameters))
        return planned if planned is not None else registry.build(fault, parameters)


def needs(plan: FaultPlan) -> dict[str, frozenset[Capability]]:
    """Fault (and disrupting) activity name → what it needs of the cluster (every fault
    disrupts it: DESTRUCTIVE, plus its kind's ``requires``)."""
    return {**{name: fault.requires | {Capability.DESTRUCTIVE} for name, fault in plan.faults.items()},
            **{name: frozenset({Capability.DESTRUCTIVE}) for name in plan.disruptions}}


def check(plan: FaultPlan, cluster: Cluster, title: str) -> None:
    """FaultError (naming the activities, what is missing and who has it) unless ``cluster``
    can take every fault of experiment ``title``."""
    wanted = needs(plan)
    if not wanted:
        return
    everything = frozenset().union(*wanted.values())
    try:
        facets.require(cluster, everything,
                       what=f"experiment {title!r} (disrupting actions: {', '.join(wanted)}), "
                            "refused before any of its actions ran,")
    except errors.FaultError as exc:
        hint = (" (in an experiment: configuration zoneproof_allow_destructive: true)"
                if Capability.DESTRUCTIVE in everything - cluster.capabilities else "")
        raise errors.FaultError(f"{exc}{hint}") from None
