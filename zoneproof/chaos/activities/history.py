"""Register traffic whose every operation is recorded: the history porcupine checks."""

from typing import Any

from zoneproof import cluster as clusters
from zoneproof import errors
from zoneproof.chaos import experiment, session
from zoneproof.measure.history import ReadMode
from zoneproof.traffic.registers import RegisterTraffic, TrafficSettings

__all__ = ["start_history_traffic", "stop_history_traffic"]


# chaostoolkit's discovery lists only positional-or-keyword parameters
def start_history_traffic(read_mode: str = "quorum", rate_ops_s: float = 150.0,  # noqa: PLR0917
                          min_rate_ops_s: float | None = None, clients: int = 16, keys: int = 5,
                          seed: int = 0, ready_within_s: float = 20.0) -> dict[str, Any]:
    """Start register traffic (``clients`` threads, ``rate_ops_s`` in total on ``keys``
    ConfigMaps; reads by ``read_mode``: quorum, watch-cache or informer) recording every
    operation, and return once it ran at ``min_rate_ops_s`` (default: what the backend's
    beds carry, ``Traits.history_min_rate_ops_s``) over the last ``GUARD_WINDOW_S``, or after
    ``ready_within_s``: its namespace and that rate. The history is void when the traffic
    ran slower in the ``GUARD_WINDOW_S`` before the fault. Stopped, and its history saved as
    ``history.json``, by ``stop_history_traffic`` or when the run closes."""
    try:
        mode = ReadMode(read_mode)
    except ValueError:
        raise errors.ConfigError(f"read_mode must be one of {[m.value for m in ReadMode]}, "
                                 f"got {read_mode!r}") from None
    run = session.current()
    if run.traffic.value is not None:
        raise errors.ConfigError("register traffic already runs in this run: one history per "
                                 "run (stop_history_traffic first)")
    namespace = experiment.named(run, "zp-history")
    if min_rate_ops_s is None:
        min_rate_ops_s = clusters.backend_type(run.config.backend).traits.history_min_rate_ops_s
    traffic = run.traffic.start(RegisterTraffic(run.cluster.kubeconfig, run.timeline, TrafficSettings(
        namespace=namespace, keys=keys, clients=clients, rate_ops_s=rate_ops_s,
        min_rate_ops_s=min_rate_ops_s, read_mode=mode, seed=seed)).start())
    rate = traffic.wait_at_rate(ready_within_s)
    return {"namespace": namespace, "ops_per_s": None if rate is None else round(rate, 1)}


def stop_history_traffic() -> dict[str, Any]:
    """Stop the register traffic and save its history (``history.json`` in the run's
    workdir); what it recorded."""
    run = session.current()
    history = run.save_history(run.traffic.pop())
    done = sum(1 for op in history.operations if op.outcome.definite)
    return {"namespace": history.plan.namespace, "read_mode": str(history.plan.read_mode),
            "operations": len(history.operations), "definite": done}
