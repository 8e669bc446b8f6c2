"""Version pins agree with what upstream says."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from zoneproof.binaries import BINARIES, PINS


def test_every_binary_belongs_to_a_pinned_project() -> None:
    assert {PINS.version_of(p) for p in BINARIES.values()}
    assert all(v.startswith("v") for v in (PINS.kubernetes, PINS.etcd, PINS.kwok))


def test_etcd_pin_is_the_one_kubernetes_names() -> None:
    """build/dependencies.yaml of the pinned Kubernetes names the etcd it is tested with."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("needs `go` to read k8s.io/kubernetes from the module cache")
    out = subprocess.run([go, "mod", "download", "-json", f"k8s.io/kubernetes@{PINS.kubernetes}"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        pytest.skip(f"module proxy unreachable: {out.stderr.strip()[:200]}")
    deps = (Path(json.loads(out.stdout)["Dir"]) / "build" / "dependencies.yaml").read_text()
    block = deps[deps.index('name: "etcd"'):]
    version = block.split("version:", 1)[1].split()[0]
    assert PINS.etcd == f"v{version}"
