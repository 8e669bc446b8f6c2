"""chaostoolkit extension: activities, the run control and discovery over zoneproof.

Belongs here: thin, typed chaostoolkit activities (``actions``, exporting ``activities``
by concern, and ``probes``) over the fault library, components and recorders; one typed
run per experiment (``experiment``) and the one open in this process (``session``); what
an experiment needs checked before it starts (``guard``: its faults, built once); the
control that opens and closes the run and stores its SLO results in the journal
(``control``); ``discover`` for ``chaos discover zoneproof --no-install``. Not here: the
faults, recorders and SLO evaluation themselves (faults, measure, slo), which stay free of
chaostoolkit.
"""

from zoneproof.chaos.discovery import discover

__all__ = ["discover"]
