"""The reference implementations of the components under test, and nothing else.

Belongs here: ``ha_config`` (the high-availability-config mutating webhook, Gardener
semantics) and ``ha_controller`` (the NooBaa-style node-NotReady pod reaper), each with
its ``python -m`` entry point and its deliberately broken variants. Not here: how a
component under test is started or registered (``components.harness``), conformance
machinery (``zoneproof.conformance``). The harness reaches these only through the
component registry (entry points), never by import.
"""

__all__: list[str] = []
