"""Traffic: what an experiment runs on the cluster while it breaks it.

Belongs here: the protected workloads, the zone-tolerant workload, the acknowledged-write
writer, admission attempts. Each records what it saw on the run's Timeline. Not here:
faults, judging (slo), chaostoolkit adapters (chaos).
"""

__all__: list[str] = []
