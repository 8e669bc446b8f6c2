"""Faults: one action injects every registered fault kind by name; revert them; wait for
the nodes they hit."""

from typing import Any

from zoneproof import errors
from zoneproof.chaos import session

__all__ = ["inject_fault", "revert_faults", "wait_nodes"]


def inject_fault(fault: str, parameters: dict[str, Any] | None = None,
                 max_duration_s: float = 300.0) -> list[str]:
    """Inject the registered fault kind ``fault`` (``stop-kubelets``, ``zone-outage``,
    ``kill-etcd-member``, ...; see ``chaos discover``) with its ``parameters``, reverted
    after ``max_duration_s`` at the latest; what it hit."""
    planned = session.planned_fault(fault, parameters)  # ConfigError before anything is touched
    return list(session.current().start_fault(planned, max_duration_s))


def wait_nodes(ready: bool = False, zone: str = "", timeout_s: float = 60.0) -> list[str]:
    """Wait until the nodes of ``zone`` (empty: every node a fault of this run must turn
    NotReady) are Ready (``ready``) or not; their names."""
    run = session.current()
    nodes = run.cluster.nodes_by_zone().get(zone, []) if zone else run.not_ready_targets()
    if not nodes:
        raise errors.ConfigError(f"no nodes to wait for (zone {zone!r}, no node fault yet)")
    run.cluster.wait_nodes(nodes, ready=ready, timeout_s=timeout_s)
    return nodes


def revert_faults(fault: str = "") -> list[str]:
    """Revert this run's active faults of kind ``fault`` (all when empty); kinds reverted."""
    return [r.kind for r in session.current().stop_faults(fault)]
