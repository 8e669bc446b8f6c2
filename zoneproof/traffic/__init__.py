"""Traffic: what an experiment runs on the cluster while it breaks it.

Belongs here: the protected workloads, the zone-tolerant workload, the acknowledged-write
writer, admission attempts, register traffic that records a checkable history
(``registers``, reading through ``informer`` in its stale mode). Each records what it saw
on the run's Timeline. Not here: faults, judging (slo), chaostoolkit adapters (chaos).
"""

__all__: list[str] = []
