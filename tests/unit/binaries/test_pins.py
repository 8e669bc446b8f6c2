"""Version pins agree with what upstream says."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from zoneproof.binaries import BINARIES, PINS
from zoneproof.binaries.pins import KIND_UPSTREAM_IMAGES


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


def _module_dir(module: str) -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip("needs `go` to read the module cache")
    out = subprocess.run([go, "mod", "download", "-json", module], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        pytest.skip(f"module proxy unreachable: {out.stderr.strip()[:200]}")
    return Path(json.loads(out.stdout)["Dir"])


def test_coredns_and_pause_pins_are_the_ones_kubeadm_names() -> None:
    constants = (_module_dir(f"k8s.io/kubernetes@{PINS.kubernetes}")
                 / "cmd" / "kubeadm" / "app" / "constants" / "constants.go").read_text()
    assert f'CoreDNSVersion = "{PINS.coredns}"' in constants
    assert f'PauseVersion = "{PINS.pause}"' in constants
    assert f'DefaultEtcdVersion = "{PINS.etcd.lstrip("v")}-0"' in constants


def test_kind_images_are_the_ones_the_pinned_kind_names() -> None:
    kind = _module_dir(f"sigs.k8s.io/kind@{PINS.kind}") / "pkg"
    sources = "\n".join(p.read_text() for p in (
        kind / "build" / "nodeimage" / "const_cni.go",
        kind / "build" / "nodeimage" / "const_storage.go",
        kind / "build" / "nodeimage" / "defaults.go",
        kind / "apis" / "config" / "defaults" / "image.go",
        kind / "cluster" / "internal" / "loadbalancer" / "const.go",
    ))
    for name, ref in KIND_UPSTREAM_IMAGES.items():
        assert ref in sources, f"{name}: {ref} is not what kind {PINS.kind} names"
    assert KIND_UPSTREAM_IMAGES["loadbalancer"].endswith(":" + PINS.tcplb)


@pytest.mark.parametrize(("module", "pin"), [
    ("github.com/anishathalye/porcupine", PINS.porcupine),
    ("github.com/rhysd/actionlint", PINS.actionlint),
], ids=["porcupine", "actionlint"])
def test_the_pin_is_served_by_the_module_proxy(module: str, pin: str) -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip("needs `go` to ask the module proxy")
    out = subprocess.run([go, "list", "-m", "-versions", module],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        pytest.skip(f"module proxy unreachable: {out.stderr.strip()[:200]}")
    assert pin in out.stdout.split()[1:]
