"""The offline kind node image holds what kubeadm and kind need; its build leaves nothing behind.

Runs only where a docker daemon answers and debootstrap can run (root); the first run builds the
image (minutes), later runs find it cached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.binaries import resolve, rootfs
from zoneproof.binaries.nodeimage import build, recipe
from zoneproof.binaries.pins import PINS


def _docker_problem() -> str | None:
    try:
        rootfs.docker_argv()
    except errors.BackendError as exc:
        return str(exc)
    if shutil.which("debootstrap") is None or os.geteuid() != 0:
        return "building the node image needs debootstrap and root (scripts/setup-docker.sh)"
    return None


_PROBLEM = _docker_problem()
pytestmark = [
    pytest.mark.skipif(_PROBLEM is not None, reason=f"needs docker: {_PROBLEM}"),
    pytest.mark.xdist_group("kind-node-image"),
]


def _run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def node_image() -> build.BuildResult:
    return build.build_node_image(progress=print)


@pytest.fixture
def node_container(node_image: build.BuildResult) -> Iterator[str]:
    name = f"zoneproof-test-node-{uuid.uuid4().hex[:8]}"
    _run("docker", "run", "-d", "--name", name, "--entrypoint", "sleep", "--network", "none",
         node_image.tag, "infinity")
    try:
        yield name
    finally:
        subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)
    assert name not in _run("docker", "ps", "-a", "--format", "{{.Names}}")


def test_node_image_holds_every_image_kubeadm_lists(node_container: str) -> None:
    required = _run("docker", "exec", node_container, "kubeadm", "config", "images", "list",
                    "--kubernetes-version", PINS.kubernetes).split()
    assert required, "kubeadm listed no images"
    _run("docker", "exec", "-d", node_container, "containerd")
    # ctr waits for the socket itself with --timeout
    listed = _run("docker", "exec", node_container, "sh", "-c",
                  "for i in $(seq 50); do ctr version >/dev/null 2>&1 && break; sleep 0.2; done; "
                  "ctr --namespace=k8s.io images list -q").split()
    assert set(required) <= set(listed), f"missing in the node's containerd: {set(required) - set(listed)}"
    for image in recipe.component_images(PINS, "x"):
        if image.ref.startswith("localhost/zoneproof/"):
            repo = image.ref.rsplit(":", 1)[0]
            assert any(ref.startswith(repo + ":") for ref in listed), repo


def test_node_image_has_kind_version_and_manifests(node_container: str) -> None:
    assert _run("docker", "exec", node_container, "cat", "/kind/version").strip() == PINS.kubernetes
    for manifest in ("default-cni.yaml", "default-storage.yaml"):
        text = _run("docker", "exec", node_container, "cat", f"/kind/manifests/{manifest}")
        assert "image: " in text and "@" not in text.replace("{{ .PodSubnet }}", "")
    kubelet = _run("docker", "exec", node_container, "kubelet", "--version")
    assert PINS.kubernetes in kubelet


def test_build_leaves_no_containers_or_work_dirs(node_image: build.BuildResult) -> None:
    again = build.build_node_image(progress=print)
    assert again.tag == node_image.tag and not again.built
    names = _run("docker", "ps", "-a", "--format", "{{.Names}}").split()
    assert not [n for n in names if n.startswith("zoneproof-nodeimage-build-")]
    work = resolve.cache_root() / "nodeimage"
    assert not list(work.glob("*")) if work.exists() else True


def test_kind_load_balancer_image_is_present(node_image: build.BuildResult) -> None:
    """kind's HA load balancer runs from the host's docker: zoneproof's stand-in or upstream's."""
    r = recipe.Recipe.for_machine(PINS, *rootfs.debian_source())
    assert build._loadbalancer_state(rootfs.docker_argv(), r) in ("current", "foreign")


_CGROUP_V1_PATCH = """
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
"""


def test_single_node_kind_cluster_comes_up_without_pulls(node_image: build.BuildResult,
                                                         tmp_path: Path) -> None:
    """`kind create cluster --image <ours>`: node Ready, CoreDNS Ready, nothing pulled; then gone."""
    kind = str(resolve.resolve("kind"))
    kubectl = str(resolve.resolve("kubectl"))
    name = f"zp-imgtest-{uuid.uuid4().hex[:6]}"
    config = tmp_path / "kind.yaml"
    cgroup_v1 = not Path("/sys/fs/cgroup/cgroup.controllers").exists()
    config.write_text("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"
                      + (_CGROUP_V1_PATCH if cgroup_v1 else ""))
    kubeconfig = tmp_path / "kubeconfig"
    try:
        _run(kind, "create", "cluster", "--name", name, "--image", node_image.tag, "--config",
             str(config), "--kubeconfig", str(kubeconfig), "--wait", "3m")
        k = [kubectl, "--kubeconfig", str(kubeconfig)]
        _run(*k, "wait", "--for=condition=Ready", "nodes", "--all", "--timeout=120s")
        _run(*k, "-n", "kube-system", "wait", "--for=condition=Ready", "pod", "-l",
             "k8s-app=kube-dns", "--timeout=120s")
        reasons = _run(*k, "get", "events", "-A", "-o", "jsonpath={.items[*].reason}").split()
        assert "Pulling" not in reasons
    finally:
        subprocess.run([kind, "delete", "cluster", "--name", name], capture_output=True, check=False)
    assert not [n for n in _run("docker", "ps", "-a", "--format", "{{.Names}}").split()
                if n.startswith(name)]
