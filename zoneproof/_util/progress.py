"""``Progress``: how long work reports what it is doing (one line per call, for people), and
the clock those lines show: the time since the command started (``$ZONEPROOF_STARTED``, handed
to every process it runs, so a suite's lines count from the same start)."""

import os
import time
from collections.abc import Callable

__all__ = ["STARTED_ENV", "Progress", "elapsed", "since_start", "started"]

Progress = Callable[[str], None]
STARTED_ENV = "ZONEPROOF_STARTED"


def started() -> float:
    """When this command started (Unix time): ``$ZONEPROOF_STARTED``, set now if unset."""
    if STARTED_ENV not in os.environ:
        os.environ[STARTED_ENV] = f"{time.time():.3f}"
    try:
        return float(os.environ[STARTED_ENV])
    except ValueError:
        os.environ[STARTED_ENV] = f"{time.time():.3f}"
        return float(os.environ[STARTED_ENV])


def elapsed(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` past an hour)."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def since_start() -> str:
    """``[m:ss]``: the time since the command started, as progress lines begin."""
    return f"[{elapsed(time.time() - started())}]"
