"""Build the offline kind node image: debootstrap → base image → component images → containerd import.

Steps (each skipped when its docker image already exists, so a warm build is seconds):

1. two Debian root file systems from the machine's configured mirror, ``docker import``-ed:
   a slim one (iptables, iproute2) under kube-proxy/kindnetd/the storage helper, and the
   node's (systemd, containerd, runc, CNI plugins);
2. the kind base image: node rootfs + zoneproof's entrypoint, kubelet units, containerd
   config, kubelet/kubeadm/kubectl, /kind/version and /kind/manifests;
3. every image kubeadm and kind need, from binaries built from their Go modules, and (on the
   host's docker, only if absent) the image kind runs as its HA load balancer, under envoy's
   name but holding zoneproof's tcplb (gobuild/tcplb);
4. a build container of the base image runs containerd, the images are imported into its
   ``k8s.io`` namespace (checked against ``kubeadm config images list``), and the container
   is committed as the node image.

Temporary containers and directories are removed on success, failure and Ctrl-C.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zoneproof import errors
from zoneproof._util import processes, waiting
from zoneproof.binaries import resolve, rootfs
from zoneproof.binaries.build import Progress
from zoneproof.binaries.nodeimage import recipe
from zoneproof.binaries.pins import PINS, Pins

__all__ = ["BuildResult", "build_node_image"]

_IMAGE_LINE = re.compile(r"^([\w.-]+(?:/[\w.-]+)+:[\w.-]+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class BuildResult:
    """The node image's tag, whether it was built now, and how long it took."""

    tag: str
    built: bool
    seconds: float
    images: tuple[str, ...]


def _loadbalancer_state(docker: list[str], r: recipe.Recipe) -> str:
    """``current``, ``foreign`` (a real envoy image: left alone), or ``missing``/``stale``."""
    ref = r.loadbalancer.ref
    if not rootfs.image_exists(docker, ref):
        return "missing"
    label = rootfs.image_label(docker, ref, recipe.LOADBALANCER_LABEL)
    if label is None:
        return "foreign"
    return "current" if label == r.loadbalancer_version else "stale"


def _loadbalancer_image(docker: list[str], r: recipe.Recipe, work: Path, bins: dict[str, Path],
                        progress: Progress) -> None:
    state = _loadbalancer_state(docker, r)
    image = r.loadbalancer
    if state in ("current", "foreign"):
        progress(f"  {image.ref}: {'cached' if state == 'current' else 'present (upstream image)'}")
        return
    context = work / "loadbalancer"
    context.mkdir(parents=True)
    shutil.copy(bins["tcplb"], context / "tcplb")
    (context / "Dockerfile").write_text(recipe.dockerfile(image, r.slim_ref))
    progress(f"  docker build {image.ref} (zoneproof tcplb standing in for kind's HA load balancer)")
    rootfs.docker_build(docker, context, image.ref,
                        f"{recipe.LOADBALANCER_LABEL}={r.loadbalancer_version}")


def _copy_files(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)


def _base_image(docker: list[str], r: recipe.Recipe, work: Path, bins: dict[str, Path],
                progress: Progress) -> None:
    if rootfs.image_exists(docker, r.base_ref):
        progress(f"  {r.base_ref}: cached")
        return
    raw = r.node_rootfs_ref
    rootfs.rootfs_image(docker, r.suite, r.mirror, raw, recipe.NODE_PACKAGES, work=work,
                        progress=progress)
    context = work / "base"
    shutil.rmtree(context, ignore_errors=True)
    (context / "root").mkdir(parents=True)
    _copy_files(recipe.FILES / "node", context / "root")
    config = context / "root" / "etc" / "containerd" / "config.toml.in"
    config.with_suffix("").write_text(
        config.read_text().replace("@PAUSE_IMAGE@", recipe.kubeadm_images(r.pins)["pause"]))
    config.unlink()
    kind_dir = context / "root" / "kind"
    (kind_dir / "manifests").mkdir(parents=True, exist_ok=True)
    (kind_dir / "version").write_text(r.pins.kubernetes)
    (kind_dir / "manifests" / "default-cni.yaml").write_text(recipe.render_cni_manifest(r.images))
    (kind_dir / "manifests" / "default-storage.yaml").write_text(
        recipe.render_storage_manifest(r.images))
    usr_bin = context / "root" / "usr" / "bin"
    usr_bin.mkdir(parents=True, exist_ok=True)
    for name in ("kubelet", "kubeadm", "kubectl"):
        shutil.copy(bins[name], usr_bin / name)
    (context / "Dockerfile").write_text(
        f"FROM {raw}\n"
        "COPY root/ /\n"
        "RUN chmod 0755 /usr/local/bin/entrypoint /usr/bin/kubelet /usr/bin/kubeadm /usr/bin/kubectl"
        " && mkdir -p /etc/kubernetes/manifests /etc/cni/net.d /opt/cni \\\n"
        " && ln -sfn /usr/lib/cni /opt/cni/bin \\\n"
        " && rm -f /etc/systemd/system/*.wants/* /lib/systemd/system/multi-user.target.wants/* \\\n"
        "   /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev*"
        " /lib/systemd/system/sockets.target.wants/*initctl* \\\n"
        " && echo ReadKMsg=no >> /etc/systemd/journald.conf \\\n"
        " && systemctl enable containerd.service kubelet.service \\\n"
        " && systemctl mask systemd-binfmt.service getty@tty1.service systemd-udevd.service"
        " systemd-modules-load.service\n"
        "ENV container=docker\n"
        "STOPSIGNAL SIGRTMIN+3\n"
        'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]\n'
        f'LABEL io.zoneproof.recipe="{r.hash}" io.zoneproof.kubernetes="{r.pins.kubernetes}"\n')
    progress(f"  docker build {r.base_ref}")
    rootfs.docker_build(docker, context, r.base_ref)


def _component_images(docker: list[str], r: recipe.Recipe, work: Path, bins: dict[str, Path],
                      progress: Progress) -> None:
    for image in r.images:
        if rootfs.image_exists(docker, image.ref):
            progress(f"  {image.ref}: cached")
            continue
        context = work / "images" / re.sub(r"[^\w.-]", "_", image.ref)
        shutil.rmtree(context, ignore_errors=True)
        context.mkdir(parents=True)
        for name, _ in image.binaries:
            shutil.copy(bins[name], context / name)
        for src, _ in image.files:
            shutil.copy(recipe.FILES / src, context / Path(src).name)
        (context / "Dockerfile").write_text(recipe.dockerfile(image, r.slim_ref))
        progress(f"  docker build {image.ref}")
        rootfs.docker_build(docker, context, image.ref)


@contextlib.contextmanager
def _build_container(docker: list[str], image: str) -> Iterator[str]:
    name = f"zoneproof-nodeimage-build-{uuid.uuid4().hex[:10]}"
    processes.run([*docker, "run", "-d", "--name", name, "--entrypoint", "sleep",
                   "--security-opt", "seccomp=unconfined", "--network", "none", image, "infinity"])
    try:
        yield name
    finally:
        subprocess.run([*docker, "rm", "-f", "-v", name], capture_output=True, check=False)


def _exec(docker: list[str], container: str, *argv: str) -> str:
    return processes.run([*docker, "exec", container, *argv])


def _import_into_containerd(docker: list[str], container: str, archive: Path) -> list[str]:
    _exec(docker, container, "sh", "-c", "containerd >/var/log/containerd-build.log 2>&1 &")

    def answers() -> tuple[bool, str]:
        try:
            return True, _exec(docker, container, "ctr", "version")
        except processes.CommandError as exc:
            return False, exc.output[-200:]
    waiting.wait_for(answers, what="containerd in the build container", timeout_s=60,
                     interval_s=0.5)
    with archive.open("rb") as f:
        proc = subprocess.run(
            [*docker, "exec", "-i", container, "ctr", "--namespace=k8s.io", "images", "import",
             "--all-platforms", "--no-unpack", "--digests", "-"],
            stdin=f, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise errors.BinaryError(f"ctr images import failed: {proc.stderr.strip()[-2000:]}")
    refs = _exec(docker, container, "ctr", "--namespace=k8s.io", "images", "list", "-q").split()
    for ref in refs:  # pinned: kubelet's image GC never removes them (ctr 1.6 import has no --label)
        _exec(docker, container, "ctr", "--namespace=k8s.io", "images", "label", ref,
              "io.cri-containerd.pinned=pinned")
    _exec(docker, container, "sh", "-c", "kill -TERM $(pidof containerd)")

    def stopped() -> tuple[bool, str]:
        out = subprocess.run([*docker, "exec", container, "pidof", "containerd"],
                             capture_output=True, text=True, check=False)
        return out.returncode != 0, out.stdout.strip()
    waiting.wait_for(stopped, what="containerd to stop in the build container", timeout_s=30,
                     interval_s=0.5)
    return refs


def _assemble(docker: list[str], r: recipe.Recipe, work: Path, progress: Progress) -> list[str]:
    refs = [image.ref for image in r.images]
    archive = work / "images.tar"
    progress(f"  docker save {len(refs)} images → {archive}")
    processes.run([*docker, "save", "-o", str(archive), *refs])
    try:
        with _build_container(docker, r.base_ref) as container:
            listing = _exec(docker, container, "kubeadm", "config", "images", "list",
                            "--kubernetes-version", r.pins.kubernetes)
            required = _IMAGE_LINE.findall(listing)  # output also has kubeadm's warnings
            missing = sorted(set(required) - set(refs))
            if missing:
                raise errors.BinaryError(
                    f"kubeadm {r.pins.kubernetes} needs images the recipe does not make: "
                    f"{', '.join(missing)}; fix the pins in zoneproof/binaries/pins.py")
            progress(f"  importing into the node's containerd (k8s.io): {', '.join(refs)}")
            imported = _import_into_containerd(docker, container, archive)
            absent = sorted(set(refs) - set(imported))
            if absent:
                raise errors.BinaryError(f"containerd did not list imported images: {absent}")
            progress(f"  docker commit → {r.node_tag}")
            processes.run([*docker, "commit",
                           "--change", 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
                           "--change", "CMD []",
                           container, r.node_tag])
    finally:
        archive.unlink(missing_ok=True)
    return refs


def build_node_image(pins: Pins = PINS, *, force: bool = False,
                     progress: Progress = print) -> BuildResult:
    """Make (or find) ``zoneproof/kind-node:<kubernetes>-<recipe hash>`` with no registry."""
    start = time.monotonic()
    docker = rootfs.docker_argv()
    suite, mirror = rootfs.debian_source()
    r = recipe.Recipe.for_machine(pins, suite, mirror)
    if (not force and rootfs.image_exists(docker, r.node_tag)
            and _loadbalancer_state(docker, r) in ("current", "foreign")):
        progress(f"node image {r.node_tag}: cached")
        return BuildResult(r.node_tag, False, time.monotonic() - start,
                           tuple(i.ref for i in r.images))
    progress(f"building node image {r.node_tag} (Debian {suite}, Kubernetes {pins.kubernetes})")
    names = ["kubelet", "kubeadm", "kubectl", "kube-proxy", "kube-apiserver",
             "kube-controller-manager", "kube-scheduler", "etcd", "coredns",
             "local-path-provisioner", "pause", "tcplb"]
    progress("  binaries (built from their Go modules when not cached)")
    bins = {name: resolve.resolve(name, pins, progress=progress) for name in names}
    work_root = resolve.cache_root() / "nodeimage"
    work_root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{pins.kubernetes}-{r.hash}-", dir=work_root))
    try:
        rootfs.rootfs_image(docker, r.suite, r.mirror, r.slim_ref, recipe.SLIM_PACKAGES, work=work,
                            progress=progress)
        _base_image(docker, r, work, bins, progress)
        _component_images(docker, r, work, bins, progress)
        _loadbalancer_image(docker, r, work, bins, progress)
        fresh = force or not rootfs.image_exists(docker, r.node_tag)
        refs = _assemble(docker, r, work, progress) if fresh else [image.ref for image in r.images]
    finally:
        rootfs.remove_rootfs(work)
    seconds = time.monotonic() - start
    progress(f"node image {r.node_tag}: built in {seconds:.0f}s")
    return BuildResult(r.node_tag, True, seconds, tuple(refs))
