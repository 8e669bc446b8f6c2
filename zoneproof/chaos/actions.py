"""chaostoolkit actions (``module: zoneproof.chaos.actions``): every activity, by concern in
``zoneproof.chaos.activities``, exported here under its public name.

One action injects every fault: ``inject_fault`` injects a registered fault kind by name
(``zoneproof.faults.registry``) through the run's one Injector (revert registered first,
bounded by ``max_duration_s``, reverted at the latest when the run closes); ``revert_faults``
ends them. The run is the one the zoneproof control opened (``session``).
"""

from zoneproof.chaos.activities.controller import (
    deploy_ha_controller,
    remove_ha_controller,
    wait_controller_leader,
)
from zoneproof.chaos.activities.faults import inject_fault, revert_faults, wait_nodes
from zoneproof.chaos.activities.history import start_history_traffic, stop_history_traffic
from zoneproof.chaos.activities.tolerant import (
    deploy_zone_tolerant_workload,
    expect_zone_tolerant_available,
    expect_zone_tolerant_spread,
)
from zoneproof.chaos.activities.webhook import (
    deploy_webhook,
    expect_admissions,
    expect_leader_zone_components,
    remove_webhook,
    restart_webhook,
    start_admission_traffic,
    stop_admission_traffic,
)
from zoneproof.chaos.activities.workloads import (
    deploy_resolver,
    deploy_workloads,
    expect_workloads_running,
    remove_workloads,
    wait_resolver,
    wait_workloads_ready,
)
from zoneproof.chaos.activities.writes import (
    expect_writes,
    start_writer,
    stop_writer,
    wait_apiserver,
)
from zoneproof.chaos.activities.zones import (
    place_leaders,
    probe_latency_limits,
    probe_member_writes,
    wait_control_plane_leaders,
    zone_returns,
)

__all__ = [
    "deploy_ha_controller",
    "deploy_webhook",
    "deploy_resolver",
    "deploy_workloads",
    "deploy_zone_tolerant_workload",
    "expect_admissions",
    "expect_leader_zone_components",
    "expect_workloads_running",
    "expect_writes",
    "expect_zone_tolerant_available",
    "expect_zone_tolerant_spread",
    "inject_fault",
    "place_leaders",
    "probe_latency_limits",
    "probe_member_writes",
    "remove_ha_controller",
    "remove_webhook",
    "remove_workloads",
    "restart_webhook",
    "revert_faults",
    "start_admission_traffic",
    "start_history_traffic",
    "start_writer",
    "stop_admission_traffic",
    "stop_history_traffic",
    "stop_writer",
    "wait_apiserver",
    "wait_control_plane_leaders",
    "wait_controller_leader",
    "wait_nodes",
    "wait_resolver",
    "wait_workloads_ready",
    "zone_returns",
]
