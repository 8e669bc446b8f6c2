"""The node image recipe: names kubeadm and kind expect, tag and hash, rendered manifests."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from zoneproof import errors
from zoneproof.binaries import rootfs
from zoneproof.binaries.nodeimage import recipe
from zoneproof.binaries.pins import KIND_UPSTREAM_IMAGES, PINS


def _recipe() -> recipe.Recipe:
    return recipe.Recipe.for_machine(PINS, "bookworm", "http://deb.example/debian")


def test_kubeadm_images_are_the_names_kubeadm_lists() -> None:
    images = recipe.kubeadm_images(PINS)
    assert images["kube-apiserver"] == f"registry.k8s.io/kube-apiserver:{PINS.kubernetes}"
    assert images["etcd"] == "registry.k8s.io/etcd:3.7.0-0"
    assert images["coredns"] == "registry.k8s.io/coredns/coredns:v1.14.6"
    assert images["pause"] == "registry.k8s.io/pause:3.10.2"


def test_every_kubeadm_image_is_made() -> None:
    made = {i.ref for i in _recipe().images}
    assert set(recipe.kubeadm_images(PINS).values()) <= made


def test_node_tag_names_the_kubernetes_version_and_the_recipe() -> None:
    r = _recipe()
    assert r.node_tag == f"zoneproof/kind-node:{PINS.kubernetes}-{r.hash}"
    assert len(r.hash) == 12


def test_hash_changes_with_pins_mirror_and_files(tmp_path: Path) -> None:
    base = recipe.recipe_hash(PINS, "bookworm", "http://a")
    assert base == recipe.recipe_hash(PINS, "bookworm", "http://a")
    assert base != recipe.recipe_hash(dataclasses.replace(PINS, coredns="v9"), "bookworm", "http://a")
    assert base != recipe.recipe_hash(PINS, "trixie", "http://a")
    assert base != recipe.recipe_hash(PINS, "bookworm", "http://b")
    (tmp_path / "f").write_text("x")
    one = recipe.recipe_hash(PINS, "bookworm", "http://a", tmp_path)
    (tmp_path / "f").write_text("y")
    assert one != recipe.recipe_hash(PINS, "bookworm", "http://a", tmp_path)


def test_host_tools_pins_leave_the_node_image_hash_alone() -> None:
    base = recipe.recipe_hash(PINS, "bookworm", "http://a")
    assert base == recipe.recipe_hash(dataclasses.replace(PINS, actionlint="v9"), "bookworm", "http://a")


def test_cni_manifest_names_the_kindnetd_image_and_keeps_kinds_template() -> None:
    images = _recipe().images
    text = recipe.render_cni_manifest(images)
    assert "@" not in text.replace("{{ .PodSubnet }}", "")
    docs = list(yaml.safe_load_all(text.replace("{{ .PodSubnet }}", "10.244.0.0/16")))
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    container = ds["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == next(i.ref for i in images if "/kindnetd:" in i.ref)
    assert container["imagePullPolicy"] == "Never"
    assert {"name": "POD_SUBNET", "value": "10.244.0.0/16"} in container["env"]


def test_storage_manifest_names_provisioner_and_helper_images() -> None:
    images = _recipe().images
    docs = list(yaml.safe_load_all(recipe.render_storage_manifest(images)))
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "StorageClass", "ConfigMap"} <= kinds
    sc = next(d for d in docs if d["kind"] == "StorageClass")
    assert sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
    text = recipe.render_storage_manifest(images)
    helper = next(i.ref for i in images if "/local-path-helper:" in i.ref)
    assert text.count(helper) == 2 and "@HELPER_IMAGE@" not in text


def test_dockerfile_of_a_scratch_image() -> None:
    coredns = next(i for i in _recipe().images if "/coredns:" in i.ref)
    text = recipe.dockerfile(coredns, "slim:1")
    assert text.splitlines()[0] == "FROM scratch"
    assert "COPY coredns /coredns" in text and 'ENTRYPOINT ["/coredns"]' in text


def test_dockerfile_of_a_slim_image_uses_the_slim_base() -> None:
    proxy = next(i for i in _recipe().images if "/kube-proxy:" in i.ref)
    assert recipe.dockerfile(proxy, "slim:1").startswith("FROM slim:1\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
     "Components: main\n", ("bookworm", "http://deb.debian.org/debian")),
    ("deb [arch=amd64] http://mirror/debian trixie main contrib\n", ("trixie", "http://mirror/debian")),
])
def test_debian_source_from_apt_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       text: str, expected: tuple[str, str]) -> None:
    (tmp_path / "sources").write_text(text)
    monkeypatch.setattr(rootfs, "_SOURCES", (tmp_path / "missing", tmp_path / "sources"))
    assert rootfs.debian_source() == expected


def test_no_debian_source_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rootfs, "_SOURCES", (tmp_path / "missing",))
    with pytest.raises(errors.BinaryError, match="configure a Debian source"):
        rootfs.debian_source()


def test_load_balancer_is_kinds_envoy_name_holding_tcplb() -> None:
    lb = _recipe().loadbalancer
    assert lb.ref == KIND_UPSTREAM_IMAGES["loadbalancer"]
    assert lb.binaries == (("tcplb", "/usr/local/bin/envoy"),) and lb.base == "slim"


def test_rootfs_images_do_not_change_with_zoneproofs_files(tmp_path: Path) -> None:
    r = _recipe()
    other = dataclasses.replace(r, hash="000000000000")
    assert (r.slim_ref, r.node_rootfs_ref) == (other.slim_ref, other.node_rootfs_ref)
    assert r.node_tag != other.node_tag
