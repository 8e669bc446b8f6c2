"""Faults: what to break, as values of registered kinds, and the one injector that breaks
and always restores.

Belongs here: the fault kinds (frozen dataclasses of their parameters, each registered
with ``@registry.kind``: a stable ``name``, what it ``requires`` of a cluster, the
``effects`` it must cause, ``targets``/``inject``/``revert`` over the Cluster primitives
and the run's ``FaultContext``), the registry that builds them by name, and the injector
(capability and safety checks, revert registered before inject, bounded duration,
records on the timeline). Not here: the primitives themselves (cluster), chaostoolkit
(chaos implements the ``NodeScheduling`` adapter), measuring effects (measure), judging
them (slo).

Adding a fault: one kind class in the module of its family (a new module is imported
below), the backend methods it needs, and an experiment that injects it by name.
"""

from zoneproof.faults import registry
from zoneproof.faults.base import Fault, FaultContext, FaultRecord, NodeScheduling
from zoneproof.faults.components import KillControllerLeader, StopWebhook
from zoneproof.faults.control_plane import KillComponent
from zoneproof.faults.dns import DnsOutage
from zoneproof.faults.effects import Effect
from zoneproof.faults.etcd import KillEtcdLeader, KillEtcdMember, KillEtcdMembers
from zoneproof.faults.injector import Injector
from zoneproof.faults.node import StopKubelets, ZoneOutage, restore_nodes
from zoneproof.faults.scheduling import CordonZone, DrainZone
from zoneproof.faults.zones import CutKubelets, KillZoneControlPlane, SlowZoneLinks, ZonePartition

__all__ = [
    "CordonZone",
    "CutKubelets",
    "DnsOutage",
    "DrainZone",
    "Effect",
    "Fault",
    "FaultContext",
    "FaultRecord",
    "Injector",
    "KillComponent",
    "KillControllerLeader",
    "KillEtcdLeader",
    "KillEtcdMember",
    "KillEtcdMembers",
    "KillZoneControlPlane",
    "NodeScheduling",
    "SlowZoneLinks",
    "StopKubelets",
    "StopWebhook",
    "ZoneOutage",
    "ZonePartition",
    "registry",
    "restore_nodes",
]
