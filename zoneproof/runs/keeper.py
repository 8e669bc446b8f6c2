"""``python -m zoneproof.runs.keeper RUN_ID``: the keeper of a run.

Started by ``runs.open_run`` in a session of its own; waits for the run's owner to end and
reaps the run if the owner did not close it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
import time

from zoneproof import runs
from zoneproof._util import reaping

__all__ = ["keep"]

log = logging.getLogger(__name__)


def _wait_owner_gone(run: runs.Run) -> bool:
    """Block until the owner ends (True) or the run is closed normally (False)."""
    owner = run.owner()
    if owner is None:
        return False  # owner.json is written before the keeper starts: the run is gone
    process = reaping.ProcessId.from_dict(owner["process"])
    handle = None
    with contextlib.suppress(OSError):  # no pidfd (old kernel): poll
        handle = os.pidfd_open(process.pid)
    try:
        while process.alive():
            if not run.directory.is_dir():
                return False
            if handle is not None:
                select.select([handle], [], [], 1.0)
            else:
                time.sleep(1.0)
    finally:
        if handle is not None:
            os.close(handle)
    return run.directory.is_dir()


def keep(run_id: str) -> int:
    """The keeper of run ``run_id``: wait for its owner to end; reap it if it was not closed."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s keeper: %(message)s")
    run = runs.Run(run_id, runs.directory(run_id))
    if not _wait_owner_gone(run):
        return 0

    def progress(message: str) -> None:
        log.info("%s", message)

    log.info("owner of run %s ended without closing it: reaping", run_id)
    started = time.monotonic()
    for problem in runs.reap(run, progress, why="its owner was killed (SIGKILL or crash): "
                             "reaped by its keeper"):
        log.error("%s", problem)
    log.info("run %s reaped in %.1f s", run_id, time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(keep(sys.argv[1]))
