"""Check a kind config with kind's own loader and validator, without creating anything.

``kind create cluster`` loads the file (strict YAML: unknown fields are errors), converts and
defaults it, validates it, and only then provisions. The check runs the real ``kind`` binary
with a stand-in ``docker`` first on PATH that answers the provider's pre-flight questions
(version, info, no existing nodes, image present) and refuses the first provisioning
command (the network): reaching it means kind accepted the config. No daemon is needed and
no container, network or kubeconfig entry is made.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from zoneproof import errors

__all__ = ["check_config"]

_STAND_IN = """#!/bin/sh
# zoneproof's stand-in for docker while kind checks a config: nothing is created.
case "$1" in
  -v) echo "Docker version 0.0.0, build zoneproof-config-check" ;;
  info) echo '{"CgroupVersion":"2","CgroupDriver":"systemd","MemoryLimit":true,'\
'"PidsLimit":true,"CPUShares":true}' ;;
  ps) ;;
  inspect) ;;
  *) echo "$*" > "$ZP_PROVISIONING_REACHED"; echo "zoneproof: config accepted" >&2; exit 97 ;;
esac
"""
_TIMEOUT_S = 60.0


def check_config(kind: Path, config: Path) -> list[str]:
    """kind's complaints about ``config`` (its output from ``ERROR:`` on); [] if accepted."""
    with tempfile.TemporaryDirectory(prefix="zp-kind-check-") as tmp:
        directory = Path(tmp)
        stand_in = directory / "docker"
        stand_in.write_text(_STAND_IN)
        stand_in.chmod(0o755)
        reached = directory / "reached"
        env = {**os.environ, "PATH": f"{directory}{os.pathsep}{os.environ.get('PATH', '')}",
               "KIND_EXPERIMENTAL_PROVIDER": "docker", "ZP_PROVISIONING_REACHED": str(reached)}
        proc = subprocess.run(
            [str(kind), "create", "cluster", "--config", str(config.resolve()),
             "--kubeconfig", str(directory / "kubeconfig"), "--wait", "0s"],
            env=env, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=_TIMEOUT_S, check=False)
        if reached.is_file():
            return []
        if proc.returncode == 0:
            raise errors.BackendError(f"kind exited 0 checking {config} without reaching "
                                      f"provisioning: is {kind} really kind?\n{proc.stdout}")
        _, marker, errors_text = proc.stdout.partition("ERROR: ")
        found = [line.strip() for line in errors_text.splitlines() if line.strip()]
        return found if marker else [proc.stdout.strip()]
