"""chaostoolkit extension: activities, the run control and discovery over zoneproof.

Belongs here: thin, typed chaostoolkit activities (``actions``, ``probes``) over the
fault library, components and recorders; the per-process run state (``session``); the
control that records a run and stores its SLO results in the journal (``control``);
``discover`` for ``chaos discover zoneproof --no-install``. Not here: the faults, recorders and
SLO evaluation themselves (faults, measure, slo), which stay free of chaostoolkit.
"""

from zoneproof.chaos.discovery import discover

__all__ = ["discover"]
