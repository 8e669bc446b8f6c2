"""Faults: what to break, as values, and the one injector that breaks and always restores.

Belongs here: fault definitions (frozen dataclasses with a stable ``name``, what they
``require`` of a cluster, ``inject``/``revert`` over the Cluster primitives) and the
injector (capability and safety checks, revert registered before inject, bounded
duration, records on the timeline). Not here: the primitives themselves (cluster),
measuring effects (measure), judging (slo).
"""

from zoneproof.faults.base import Fault, FaultRecord
from zoneproof.faults.control_plane import KillComponent
from zoneproof.faults.etcd import KillEtcdMember, KillEtcdMembers
from zoneproof.faults.injector import Injector
from zoneproof.faults.node import StopKubelets, ZoneOutage, restore_nodes

__all__ = [
    "Fault",
    "FaultRecord",
    "Injector",
    "KillComponent",
    "KillEtcdMember",
    "KillEtcdMembers",
    "StopKubelets",
    "ZoneOutage",
    "restore_nodes",
]
