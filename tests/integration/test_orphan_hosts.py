"""A test's own state root (``host``) outlives its session only when that session was
killed; the next host made sweeps it away: its processes ended, its directory removed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from zoneproof._util import reaping, waiting

from .conftest import _OWNER, STATE_ENV, sweep_orphans


def _host(parent: Path, name: str, owner: reaping.ProcessId | None) -> Path:
    root = parent / name
    (root / "state").mkdir(parents=True)
    (root / "tmp").mkdir()
    if owner is not None:
        (root / _OWNER).write_text(json.dumps(owner.to_dict()))
    return root


def test_a_host_whose_owner_died_is_swept_and_a_live_or_new_one_kept(tmp_path: Path) -> None:
    gone = subprocess.Popen(["sleep", "60"])
    dead = reaping.ProcessId.of(gone.pid)
    assert dead is not None
    gone.kill()
    gone.wait()
    orphan = _host(tmp_path, "orphan", dead)
    mine = _host(tmp_path, "mine", reaping.ProcessId.me())
    making = _host(tmp_path, "making", None)  # no owner yet, just made
    left = subprocess.Popen(["sleep", "600"], env={**os.environ, STATE_ENV: str(orphan / "state")})
    try:
        assert sweep_orphans(tmp_path) == ["orphan"]
        waiting.wait_for(lambda: (left.poll() is not None, "running"),
                         what="the orphan's process to end", timeout_s=10)
        assert not orphan.exists() and mine.is_dir() and making.is_dir()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["making", "mine"], "no lock left"
        old = making.stat().st_mtime - 7 * 3600
        os.utime(making, (old, old))  # a host made long ago that never got its owner
        assert sweep_orphans(tmp_path) == ["making"]
    finally:
        left.kill()
        left.wait()
