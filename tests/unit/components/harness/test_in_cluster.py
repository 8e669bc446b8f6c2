"""In-cluster components: the source, the options that choose it, the refusal, what is reported."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import (
    in_cluster,
    in_cluster_controller,
    kinds,
    options,
    source,
    started,
)
from zoneproof.components.harness.component import REFERENCE_MANIFESTS, Component, Components
from zoneproof.components.harness.controller import ControllerSettings
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.in_cluster import InCluster


def _vendor(tmp_path: Path) -> tuple[Path, Path]:
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "kustomization.yaml").write_text("resources: []\n")
    archive = tmp_path / "images.tar"
    archive.write_bytes(b"")
    return manifests, archive


def test_in_cluster_mode_chooses_the_reference_manifests_and_images() -> None:
    for kind in kinds.every():
        chosen = options.from_choices(kind, mode=source.IN_CLUSTER)
        assert chosen.source == InCluster(REFERENCE_MANIFESTS[kind])
        assert chosen.mode == source.IN_CLUSTER and chosen.source.reference
        assert chosen.to_dict() == {"kind": str(kind), "source": "in-cluster",
                                    "manifests": str(REFERENCE_MANIFESTS[kind])}
    assert options.from_choices(Kind.WEBHOOK).mode == source.HOST


def test_a_vendors_manifests_and_archive_round_trip(tmp_path: Path) -> None:
    manifests, archive = _vendor(tmp_path)
    chosen = options.from_choices(Kind.CONTROLLER, mode="in-cluster",
                                    manifests=str(manifests), image_archive=str(archive))
    assert chosen.source == InCluster(manifests, archive)
    both = Components(controller=chosen)
    assert Components.from_dict(both.to_json()) == both


@pytest.mark.parametrize(("choices", "message"), [
    ({"mode": "pods"}, "--zp-components 'pods': choose host or in-cluster"),
    ({"manifests": "x", "image_archive": "y"}, "add --zp-components in-cluster"),
    ({"mode": "in-cluster", "command": "w {port} {cert_file} {key_file}"},
     "--zp-webhook-command name a host webhook"),
    ({"mode": "in-cluster", "url": "https://x", "ca_bundle": "c"}, "--zp-webhook-url, "
     "--zp-webhook-ca-bundle name a host webhook"),
    ({"mode": "in-cluster", "variant": "create-only"}, "broken variants run as host processes"),
    ({"mode": "in-cluster", "manifests": "x"}, "needs both --zp-webhook-manifests DIR and "
     "--zp-webhook-image-archive TAR"),
])
def test_conflicting_options_name_the_fix(choices: dict[str, str], message: str) -> None:
    with pytest.raises(errors.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        options.from_choices(Kind.WEBHOOK, **choices)


def test_bad_vendor_paths_are_named(tmp_path: Path) -> None:
    manifests, archive = _vendor(tmp_path)
    found = Component(Kind.WEBHOOK, InCluster(tmp_path, tmp_path / "none.tar")).problems()
    assert any("have no kustomization.yaml" in p for p in found)
    assert any("none.tar is not a file" in p for p in found)
    assert "need the image archive" in " ".join(Component(Kind.WEBHOOK, InCluster(manifests))
                                                 .problems())
    assert Component(Kind.WEBHOOK, InCluster(manifests, archive)).problems() == []


def test_an_in_cluster_component_has_no_command_and_only_the_reference_controller_variants(
        tmp_path: Path) -> None:
    chosen = options.from_choices(Kind.CONTROLLER, mode="in-cluster")
    with pytest.raises(errors.ConfigError, match="deployed by its manifests"):
        chosen.argv({})
    broken = chosen.with_variant("no-reconcile")  # the reference images run it (--variant)
    assert broken.source == InCluster(REFERENCE_MANIFESTS[Kind.CONTROLLER], None, "no-reconcile")
    assert Component.from_dict(broken.to_dict()) == broken
    assert "variant no-reconcile" in broken.label()
    assert "has no variant 'nonsense'" in (chosen.cannot_be("nonsense") or "")
    webhook = options.from_choices(Kind.WEBHOOK, mode="in-cluster")
    assert "--zp-components host" in (webhook.cannot_be("no-reconcile") or "")
    vendor = Component(Kind.CONTROLLER, InCluster(tmp_path, tmp_path / "images.tar"))
    assert "--zp-components host" in (vendor.cannot_be("no-reconcile") or "")
    bad = Component(Kind.CONTROLLER, InCluster(REFERENCE_MANIFESTS[Kind.CONTROLLER], None, "nope"))
    assert any("has no variant 'nope'" in p for p in bad.problems())


def test_the_in_cluster_controller_runs_its_variant_by_flag() -> None:
    settings = ControllerSettings(namespaces=("ns",), component=options.from_choices(
        Kind.CONTROLLER, mode="in-cluster").with_variant("no-leader-election"))
    args = in_cluster_controller.scoped_args(["--variant=reference", "--x"], settings)
    assert args[0] == "--x" and args[-1] == "--variant=no-leader-election"
    plain = in_cluster_controller.scoped_args([], settings.with_component(
        options.from_choices(Kind.CONTROLLER, mode="in-cluster")))
    assert not any(a.startswith("--variant") for a in plain)


class _Cluster:
    name, backend = "bed", "local"
    capabilities = frozenset(Capability) - {Capability.LOAD_IMAGES}


def test_a_cluster_that_cannot_load_images_is_refused_naming_the_fix() -> None:
    reason = in_cluster.refusal(_Cluster())  # type: ignore[arg-type]
    assert reason is not None
    assert "cluster 'bed' of the local backend cannot" in reason
    assert "use --zp-backend kind, or --zp-components host" in reason


def test_pytest_refuses_in_cluster_components_on_local(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess("--zp-backend", "local", "--zp-components", "in-cluster")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--zp-components in-cluster: the local backend cannot load "
                                 "image archives*use --zp-backend kind, or --zp-components host*"])


def _archive(path: Path, entries: list[dict[str, object]]) -> Path:
    data = json.dumps(entries).encode()
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_archive_images_names_each_tag_with_its_image_id(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.tar", [
        {"Config": "blobs/sha256/abc", "RepoTags": ["localhost/x:1", "localhost/x:2"]},
        {"Config": "def.json", "RepoTags": ["localhost/y:1"]}, {"Config": "nameless.json"}])
    assert in_cluster.archive_images(archive) == (
        ("localhost/x:1", "sha256:abc"), ("localhost/x:2", "sha256:abc"),
        ("localhost/y:1", "sha256:def"))
    (tmp_path / "b.tar").write_bytes(b"not a tar")
    with pytest.raises(errors.ConfigError, match="no readable manifest.json"):
        in_cluster.archive_images(tmp_path / "b.tar")


def test_a_start_names_the_mode_manifests_archive_and_image_ids() -> None:
    chosen = options.from_choices(Kind.WEBHOOK, mode="in-cluster")
    description = {"mode": "in-cluster", "kubeconfig": "/k", "manifests": "/m",
                   "image_archive": "/a.tar", "archive_sha256": "f00",
                   "images": [{"name": "localhost/x:1", "id": "sha256:abc"}],
                   "running": [{"pod": "ns/p", "image_id": "sha256:abc"}],
                   "objects": [{"kind": "Namespace"}], "created_namespaces": ["ns"]}
    out = started.Started(chosen, in_cluster=description).to_dict()
    assert out["mode"] == "in-cluster"
    assert out["in_cluster"] == {k: v for k, v in description.items()
                                 if k not in ("mode", "kubeconfig", "objects", "created_namespaces")}
    assert started.Started.from_dict(out).in_cluster == out["in_cluster"]


def test_the_suite_scopes_the_in_cluster_controller_by_the_reference_flags() -> None:
    from zoneproof.components.harness.controller import ControllerSettings
    from zoneproof.components.harness.in_cluster_controller import scoped_args

    settings = ControllerSettings(namespaces=("w1", "w2"), selector="app=x", lease_duration_s=6,
                                  renew_deadline_s=4.0, retry_period_s=1.0)
    args = ["--all-namespaces", "--selector=app=noobaa", "--lease-name=l", "--identity=$(POD_NAME)",
            "--lease-duration=15"]
    assert scoped_args(args, settings) == [
        "--lease-name=l", "--identity=$(POD_NAME)", "--namespaces=w1,w2", "--selector=app=x",
        "--lease-duration=6", "--renew-deadline=4.0", "--retry-period=1.0"]
