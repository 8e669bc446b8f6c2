"""The API's write path: a background writer whose acknowledged writes must all survive,
and waits for writes and the API server."""

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.chaos import experiment, probes, session
from zoneproof.cluster import facets
from zoneproof.cluster.interface import Capability
from zoneproof.traffic.writer import Writer

__all__ = ["expect_writes", "start_writer", "stop_writer", "wait_apiserver"]


def start_writer(interval_s: float = 0.2, zone: str = "") -> str:
    """Start the background writer (every acknowledged write recorded); its namespace.
    With ``zone`` (a cluster whose zones are failure domains) it writes through that zone's
    API server alone, as a client pinned to one server would, not the load balancer."""
    if interval_s <= 0:
        raise errors.ConfigError(f"interval_s must be > 0, got {interval_s}")
    run = session.current()
    namespace = experiment.named(run, "zp-writes")
    pinned = (facets.facet(run.cluster, Capability.ZONES).zone_kubeconfig(zone) if zone
              else None)
    run.writer.start(Writer(run.cluster, run.timeline, namespace=namespace,
                            interval_s=interval_s, kubeconfig=pinned).start())
    return namespace


def stop_writer() -> dict[str, int]:
    """Stop the writer and verify every acknowledged write; counts."""
    run = session.current()
    writer = run.writer.pop()
    writer.stop()
    lost = sum(1 for _ in run.timeline.select("write_lost"))
    return {"acknowledged": len(writer.acknowledged), "failed": writer.failed, "lost": lost}


def expect_writes(succeed: bool = True, timeout_s: float = 10.0) -> bool:
    """Wait until a write through the API server succeeds (``succeed``) or fails; raises
    if that does not happen within ``timeout_s``."""
    waiting.wait_for(lambda: (probes.write_succeeds() == succeed, None),
                     what=f"API writes {'acknowledged' if succeed else 'failing'}",
                     timeout_s=timeout_s, interval_s=0.5)
    return succeed


def wait_apiserver(ready: bool = True, timeout_s: float = 60.0) -> bool:
    """Wait until the API server's /readyz answers 200 (``ready``) or not."""
    cluster = session.current().cluster
    waiting.wait_for(lambda: (cluster.apiserver_ready() == ready, None),
                     what=f"kube-apiserver /readyz {'OK' if ready else 'failing'}",
                     timeout_s=timeout_s)
    return ready
