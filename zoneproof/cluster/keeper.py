"""``python -m zoneproof.cluster.keeper RUN_ID``: the keeper of a run (see ``runs``).

Started by ``runs.open_run`` in a session of its own; waits for the run's owner to end and
reaps the run if the owner did not close it.
"""

from __future__ import annotations

import sys

from zoneproof.cluster import runs

if __name__ == "__main__":
    sys.exit(runs.keep(sys.argv[1]))
