"""``zoneproof bench node-agent``: the node agent on the kind cluster of ``$KUBECONFIG``, medians.

The cluster is a user's (``kind create cluster --config kind-configs/multi-zone.yaml``, the
node-agent image loaded into it), driven as the existing backend with destructive faults
allowed. Per run: the agent installed (seconds until it runs on every node); one kubelet
stopped through the agent and, on the same node, through the kind backend's path (``docker
exec <node> systemctl stop kubelet``), each until the node is NotReady (and their ratio);
a zone taken down by a separate suite process that is then SIGKILLed, until every agent of
the zone reported its revert (the dead-man's switch, by the report's time) and until the
zone's nodes are Ready; the agent removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.bench import samples as figures
from zoneproof.cluster import get_backend
from zoneproof.cluster.existing import AgentCluster
from zoneproof.cluster.interface import Progress
from zoneproof.cluster.kind import docker, nodes
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.faults import Injector, ZoneOutage
from zoneproof.measure import Timeline
from zoneproof.nodeagent.protocol import Reason, State

__all__ = ["bench_node_agent", "sigkill_during_zone_outage"]

_TIMEOUT_S = 180.0
_DOWN = "ZONE-DOWN"


def _kubeconfig() -> Path:
    value = os.environ.get("KUBECONFIG", "")
    if not value or not Path(value).is_file():
        raise errors.ConfigError("bench node-agent runs on the cluster of $KUBECONFIG (one file): "
                                 "make one with `kind create cluster --config kind-configs/multi-"
                                 "zone.yaml --kubeconfig FILE`, load the node-agent image into it "
                                 "(`kind load image-archive`), and set KUBECONFIG=FILE")
    return Path(value)


def _until_not_ready(cluster: AgentCluster, node: str, stop: Callable[[], object]) -> float:
    start = time.monotonic()
    stop()
    cluster.wait_nodes([node], ready=False, timeout_s=_TIMEOUT_S)
    return time.monotonic() - start


def _not_ready_both_ways(cluster: AgentCluster, node: str) -> tuple[float, float]:
    """Stop→NotReady of ``node`` through its agent, then through ``docker exec`` (kind's path)."""
    agent = _until_not_ready(cluster, node, lambda: cluster.stop_kubelet(node))
    cluster.start_kubelet(node)
    cluster.wait_nodes([node], ready=True, timeout_s=_TIMEOUT_S)
    by_docker = _until_not_ready(cluster, node,
                                 lambda: docker.exec_in(node, nodes.kubelet_argv("stop")))
    docker.exec_in(node, nodes.kubelet_argv("start"))
    cluster.wait_nodes([node], ready=True, timeout_s=_TIMEOUT_S)
    return agent, by_docker


def _victim(kubeconfig: Path, zone: str, max_duration_s: float) -> None:
    """A suite process that takes ``zone`` down through the agents, then hangs (to be killed)."""
    backend = get_backend("existing", kubeconfig=kubeconfig, allow_destructive=True)
    cluster = backend.get("")
    if not isinstance(cluster, AgentCluster):
        raise errors.BackendError("the node agent is not installed on the cluster")
    Injector(cluster, Timeline()).start(ZoneOutage(zone), max_duration_s=max_duration_s)
    print(_DOWN, flush=True)
    time.sleep(3600)


def sigkill_during_zone_outage(cluster: AgentCluster, zone: str, *, max_duration_s: float = 600.0
                               ) -> tuple[float, float, dict[str, Reason | None]]:
    """SIGKILL a suite process holding ``zone`` down: (seconds until every agent of the zone
    reported its revert, seconds until the zone's nodes are Ready, each node's revert reason)."""
    zone_nodes = cluster.zone_nodes(zone)
    victim = subprocess.Popen(
        [sys.executable, "-m", "zoneproof.bench.nodeagent", str(cluster.kubeconfig), zone,
         str(max_duration_s)], stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout is not None
        line = victim.stdout.readline().strip()
        if line != _DOWN:
            raise errors.FaultError(f"the suite process did not take {zone} down (said {line!r})")
        cluster.wait_nodes(zone_nodes, ready=False, timeout_s=_TIMEOUT_S)
    finally:
        killed_wall, killed = time.time(), time.monotonic()
        victim.kill()
        victim.wait()

    def reverted() -> tuple[bool, dict[str, str]]:
        reports = cluster.agents.reports()
        states = {n: (reports[n].state.value if n in reports else "none") for n in zone_nodes}
        return all(s == State.REVERTED.value for s in states.values()), states

    waiting.wait_for(reverted, what=f"agents of {zone} reverting by themselves",
                     timeout_s=_TIMEOUT_S, interval_s=0.2)
    reports = cluster.agents.reports()
    revert_s = max((reports[n].reverted_at or killed_wall) for n in zone_nodes) - killed_wall
    cluster.wait_nodes(zone_nodes, ready=True, timeout_s=_TIMEOUT_S)
    return revert_s, time.monotonic() - killed, {n: reports[n].reason for n in zone_nodes}


def bench_node_agent(runs: int, progress: Progress, out: Path | None = None) -> figures.Summary:
    """Install, stop→NotReady by agent and by docker, SIGKILL→revert and →Ready, remove."""
    kubeconfig = _kubeconfig()
    backend = get_backend("existing", kubeconfig=kubeconfig, allow_destructive=True)
    samples = figures.Samples()
    note = samples.note
    for run in range(1, runs + 1):
        start = time.monotonic()
        cluster = backend.create(ClusterSpec(), progress=lambda _: None)
        note("agent_install_seconds", time.monotonic() - start)
        try:
            assert isinstance(cluster, AgentCluster)
            zones = sorted(z for z in cluster.nodes_by_zone() if z)
            agent, by_docker = _not_ready_both_ways(cluster, cluster.zone_nodes(zones[0])[0])
            note("not_ready_by_agent_seconds", agent)
            note("not_ready_by_docker_seconds", by_docker)
            note("agent_to_docker_ratio", agent / by_docker)
            revert_s, ready_s, reasons = sigkill_during_zone_outage(cluster, zones[-1])
            if set(reasons.values()) != {Reason.SWITCH_EXPIRED}:
                raise errors.FaultError(f"the agents reverted for another reason: {reasons}")
            note("sigkill_to_agents_reverted_seconds", revert_s)
            note("sigkill_to_zone_ready_seconds", ready_s)
        finally:
            start = time.monotonic()
            backend.delete("", progress=lambda _: None)
            note("agent_remove_seconds", time.monotonic() - start)
        progress(f"run {run}/{runs}: " + ", ".join(f"{k}={v[-1]:.2f}" for k, v in samples.items()))
    return figures.summarize(samples, progress, out)


if __name__ == "__main__":
    _victim(Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]))
