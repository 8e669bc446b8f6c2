"""What the offline kind node image holds: image names, Dockerfiles, manifests, recipe hash (pure)."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from zoneproof.binaries.build import source_digest
from zoneproof.binaries.pins import HOST_TOOLS, KIND_UPSTREAM_IMAGES, PINS, Pins

__all__ = [
    "FILES",
    "LOADBALANCER_LABEL",
    "NODE_PACKAGES",
    "RECIPE_VERSION",
    "SLIM_PACKAGES",
    "ComponentImage",
    "Recipe",
    "component_images",
    "dockerfile",
    "kubeadm_images",
    "recipe_hash",
    "render_cni_manifest",
    "render_storage_manifest",
]

#: Bump when the recipe changes in a way the hashed inputs do not show.
RECIPE_VERSION = "1"

#: Debian packages of the node's root file system (debootstrap --variant=minbase --include).
NODE_PACKAGES = (
    "systemd", "systemd-sysv", "dbus", "containerd", "runc", "containernetworking-plugins",
    "iptables", "nftables", "conntrack", "iproute2", "ethtool", "util-linux", "mount", "kmod",
    "libseccomp2", "pigz", "bash", "ca-certificates", "procps", "jq", "socat",
)
#: Debian packages of the small root file system under kube-proxy, kindnetd and the storage helper.
SLIM_PACKAGES = ("iptables", "nftables", "conntrack", "iproute2", "ca-certificates")

#: zoneproof's files that go into the images (entrypoint, units, containerd config, kindnetd).
FILES = Path(str(resources.files("zoneproof.binaries.nodeimage") / "files"))

_LOCAL = "localhost/zoneproof"
#: Label on zoneproof's stand-in for kind's envoy load balancer (``Recipe.loadbalancer_version``).
LOADBALANCER_LABEL = "io.zoneproof.tcplb-recipe"


@dataclass(frozen=True, slots=True)
class ComponentImage:
    """One image imported into the node's containerd: a binary on a base, under ``ref``."""

    ref: str
    #: ``scratch`` or ``slim`` (the small Debian root file system)
    base: str
    #: (binary name as resolved by zoneproof.binaries.resolve, path in the image)
    binaries: tuple[tuple[str, str], ...]
    entrypoint: tuple[str, ...] = ()
    #: extra files from FILES: (relative source, path in the image)
    files: tuple[tuple[str, str], ...] = ()


def kubeadm_images(pins: Pins = PINS) -> dict[str, str]:
    """Component → image that ``kubeadm config images list`` names for ``pins.kubernetes``."""
    registry = "registry.k8s.io"
    kube = {c: f"{registry}/{c}:{pins.kubernetes}" for c in
            ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")}
    return {
        **kube,
        "coredns": f"{registry}/coredns/coredns:{pins.coredns}",
        "pause": f"{registry}/pause:{pins.pause}",
        "etcd": f"{registry}/etcd:{pins.etcd.lstrip('v')}-0",
    }


def component_images(pins: Pins = PINS, tag: str = "dev") -> tuple[ComponentImage, ...]:
    """Every image the node needs: kubeadm's (exact names) and kind's addons (zoneproof names).

    ``tag`` versions zoneproof's own images (kindnetd and the storage helper), normally the
    recipe hash.
    """
    names = kubeadm_images(pins)
    bin_dir = "/usr/local/bin"
    control = tuple(
        ComponentImage(names[c], "scratch", ((c, f"{bin_dir}/{c}"),))
        for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"))
    return (
        *control,
        ComponentImage(names["kube-proxy"], "slim", (("kube-proxy", f"{bin_dir}/kube-proxy"),)),
        ComponentImage(names["coredns"], "scratch", (("coredns", "/coredns"),), ("/coredns",)),
        ComponentImage(names["pause"], "scratch", (("pause", "/pause"),), ("/pause",)),
        ComponentImage(f"{_LOCAL}/kindnetd:{tag}", "slim", (("kubectl", f"{bin_dir}/kubectl"),),
                       (f"{bin_dir}/kindnetd",), (("kindnetd/kindnetd", f"{bin_dir}/kindnetd"),)),
        ComponentImage(f"{_LOCAL}/local-path-provisioner:{pins.local_path_provisioner}", "scratch",
                       (("local-path-provisioner", f"{bin_dir}/local-path-provisioner"),),
                       (f"{bin_dir}/local-path-provisioner",)),
        ComponentImage(f"{_LOCAL}/local-path-helper:{tag}", "slim", ()),
    )


def dockerfile(image: ComponentImage, slim_ref: str) -> str:
    """The Dockerfile of ``image``; its build context holds each source under its base name."""
    lines = [f"FROM {'scratch' if image.base == 'scratch' else slim_ref}",
             "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    lines += [f"COPY {name} {dest}" for name, dest in image.binaries]
    lines += [f"COPY {Path(src).name} {dest}" for src, dest in image.files]
    if image.entrypoint:
        lines.append("ENTRYPOINT [" + ", ".join(f'"{a}"' for a in image.entrypoint) + "]")
    return "\n".join(lines) + "\n"


def _by_name(images: tuple[ComponentImage, ...], fragment: str) -> str:
    return next(i.ref for i in images if f"/{fragment}:" in i.ref)


def render_cni_manifest(images: tuple[ComponentImage, ...]) -> str:
    """/kind/manifests/default-cni.yaml: zoneproof's kindnetd DaemonSet; kind fills {{ .PodSubnet }}."""
    image = _by_name(images, "kindnetd")
    return (FILES / "manifests" / "default-cni.yaml").read_text().replace("@KINDNETD_IMAGE@", image)


def render_storage_manifest(images: tuple[ComponentImage, ...]) -> str:
    """/kind/manifests/default-storage.yaml: local-path-provisioner as the default StorageClass."""
    text = (FILES / "manifests" / "default-storage.yaml").read_text()
    return (text.replace("@PROVISIONER_IMAGE@", _by_name(images, "local-path-provisioner"))
            .replace("@HELPER_IMAGE@", _by_name(images, "local-path-helper")))


def _files_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _image_pins(pins: Pins) -> str:
    """``repr(pins)`` without the host-only tools' pins (``HOST_TOOLS``): they are not in the image."""
    kept = (f"{f.name}={getattr(pins, f.name)!r}" for f in dataclasses.fields(pins)
            if f.name not in HOST_TOOLS)
    return f"{type(pins).__name__}({', '.join(kept)})"


def recipe_hash(pins: Pins, suite: str, mirror: str, files_root: Path = FILES) -> str:
    """12 hex digits over every input that changes the image (pins, Debian, packages, files)."""
    parts = [RECIPE_VERSION, _image_pins(pins), suite, mirror, " ".join(NODE_PACKAGES),
             " ".join(SLIM_PACKAGES), _files_digest(files_root)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Recipe:
    """The resolved recipe for one build: names of every image it makes."""

    pins: Pins
    suite: str
    mirror: str
    hash: str

    @classmethod
    def for_machine(cls, pins: Pins, suite: str, mirror: str) -> Recipe:
        return cls(pins, suite, mirror, recipe_hash(pins, suite, mirror))

    @property
    def node_tag(self) -> str:
        """``zoneproof/kind-node:v1.37.2-<hash>``."""
        return f"zoneproof/kind-node:{self.pins.kubernetes}-{self.hash}"

    def _rootfs_hash(self, packages: tuple[str, ...]) -> str:
        text = "\n".join([self.suite, self.mirror, *packages])
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def slim_ref(self) -> str:
        """The small Debian rootfs; keyed by its packages only, so file edits reuse it."""
        return f"{_LOCAL}/debian-slim:{self.suite}-{self._rootfs_hash(SLIM_PACKAGES)}"

    @property
    def node_rootfs_ref(self) -> str:
        """The node's Debian rootfs before zoneproof's files; keyed by its packages only."""
        return f"{_LOCAL}/debian-node:{self.suite}-{self._rootfs_hash(NODE_PACKAGES)}"

    @property
    def base_ref(self) -> str:
        return f"{_LOCAL}/kind-base:{self.suite}-{self.hash}"

    @property
    def images(self) -> tuple[ComponentImage, ...]:
        return component_images(self.pins, self.hash)

    @property
    def loadbalancer_version(self) -> str:
        """The recipe hash and the digest of tcplb's sources: a changed tcplb is rebuilt."""
        return f"{self.hash}-{source_digest('tcplb')}"

    @property
    def loadbalancer(self) -> ComponentImage:
        """kind's HA load balancer (envoy's name; zoneproof's tcplb), on the host's docker."""
        ref = KIND_UPSTREAM_IMAGES["loadbalancer"]
        if not ref.endswith(":" + self.pins.tcplb):
            raise ValueError(f"kind's load balancer {ref} and the tcplb pin {self.pins.tcplb} differ")
        return ComponentImage(ref, "slim", (("tcplb", "/usr/local/bin/envoy"),))
