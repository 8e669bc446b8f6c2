"""Components under test: reference implementations and the plug-in interface.

Belongs here: the processes that conformance and chaos suites exercise, each a package
with pure decision modules, a process entry point (``python -m``) and a registry of
deliberately broken variants (``ha_config``: the high-availability-config mutating
webhook; ``ha_controller``: the node-NotReady pod reaper). Not here: cluster backends,
fault injection, measurement, SLO judgement.
"""

__all__: list[str] = []
