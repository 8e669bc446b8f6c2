"""Control-plane faults: kube-apiserver, kcm or the scheduler SIGKILLed; revert restarts it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability, ControlPlaneProcess
from zoneproof.faults import registry
from zoneproof.faults.base import FaultContext
from zoneproof.faults.effects import Effect

__all__ = ["KillComponent"]


@registry.kind
@dataclass(frozen=True, slots=True)
class KillComponent:
    """SIGKILL kube-apiserver, kcm or the scheduler (``component``); revert restarts it."""

    name: ClassVar[str] = "kill-control-plane"
    requires: ClassVar[frozenset[Capability]] = frozenset({Capability.CONTROL_PLANE,
                                                           Capability.DESTRUCTIVE})
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.CONTROL_PLANE_DOWN})

    component: ControlPlaneProcess = ControlPlaneProcess.APISERVER

    def targets(self, context: FaultContext) -> tuple[str, ...]:
        return (self.component.value,)

    def inject(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        facets.facet(context.cluster, Capability.CONTROL_PLANE).kill_component(self.component)

    def revert(self, context: FaultContext, targets: tuple[str, ...]) -> None:
        facets.facet(context.cluster, Capability.CONTROL_PLANE).restart_component(
            self.component)
