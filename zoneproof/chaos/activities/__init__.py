"""The chaostoolkit activities, one module per concern; ``zoneproof.chaos.actions`` exports them.

``workloads`` (what the HA controller protects), ``controller`` (the HA controller under
test), ``faults`` (inject, revert, wait for nodes), ``writes`` (the API's write path),
``history`` (register traffic with a recorded history), ``webhook`` (the webhook under test
and admissions through it), ``tolerant`` (a workload the webhook makes zone tolerant),
``zones`` (the zones as failure domains: leaders placed, a zone returning, latency limits). Each
reads the run the control opened (``session.current``). No ``from __future__ import
annotations`` in these modules: chaostoolkit discovery reads real types.
"""
