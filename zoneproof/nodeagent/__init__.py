"""The node agent: a privileged DaemonSet that stops and starts its node's kubelet on command.

What belongs here: the protocol between the suite and the agents (one ConfigMap per node and
the dead-man's switch Lease, ``protocol``), the agent's pure decisions (``logic``), the host
commands it runs through the host's namespaces (``host``) and its loop (``agent``, run as
``python -m zoneproof.nodeagent`` in the node-agent image). Everything here runs inside the
image too, so it imports only ``zoneproof._util`` and ``zoneproof.errors``. Not here: installing
the agent and driving it from the suite (``zoneproof.cluster.nodeagent``).
"""
