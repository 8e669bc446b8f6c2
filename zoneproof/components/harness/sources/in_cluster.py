"""Workloads the suite deploys in the cluster: kustomize manifests + the images of an archive.

The reference's are deploy/ and the archive ``zoneproof build --images`` makes; a vendor
gives both. They run on backends that load image archives into their nodes (kind); the
deploying itself is ``harness.in_cluster``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, TypeVar

from zoneproof import errors
from zoneproof.binaries.images import build_component_images
from zoneproof.cluster.interface import Capability
from zoneproof.components.harness import registry
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Launcher, Named, Source, Where
from zoneproof.components.manifests import Rendered
from zoneproof.components.manifests import render as render_manifests

__all__ = ["InCluster"]

T = TypeVar("T")
C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class InCluster(Source):
    """Workloads deployed from kustomize ``manifests`` with ``image_archive``'s images loaded
    into every node; no archive: the reference images (``zoneproof build --images``)."""

    manifests: Path
    image_archive: Path | None = None
    variant: str = registry.REFERENCE
    """A variant of the reference the reference images run (a vendor's images have none)."""
    name: ClassVar[str] = "in-cluster"
    where: ClassVar[Where] = Where.IN_CLUSTER
    requires: ClassVar[frozenset[Capability]] = frozenset({Capability.LOAD_IMAGES})
    default: ClassVar[bool] = True
    registers_itself: ClassVar[bool] = True
    options: ClassVar[tuple[Option, ...]] = (
        Option("manifests", "in-cluster {kind}: its kustomize directory (default: the "
               "reference's in deploy/)", metavar="DIR", path=True, selects=True),
        Option("image_archive", "in-cluster {kind}: `docker save` archive of its images "
               "(default: `zoneproof build --images`)", metavar="TAR", path=True, selects=True),
        Option("variant", "a variant of the reference the reference images run",
               default=registry.REFERENCE, flags=False))

    @property
    def reference(self) -> bool:
        """True for the reference's own images."""
        return self.image_archive is None

    def to_dict(self) -> dict[str, str]:
        out = {"manifests": str(self.manifests)}
        if self.image_archive is not None:
            out["image_archive"] = str(self.image_archive)
        if self.variant != registry.REFERENCE:
            out["variant"] = self.variant
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, str], kind: Kind) -> InCluster:
        archive = data.get("image_archive")
        return cls(Path(data.get("manifests", kind.spec.manifests)),
                   Path(archive) if archive else None, data.get("variant", registry.REFERENCE))

    @classmethod
    def from_options(cls, kind: Kind, given: Mapping[str, str], named: Named) -> InCluster:
        if ("manifests" in given) != ("image_archive" in given):
            raise errors.ConfigError(f"a vendor's in-cluster {kind} needs both "
                                     f"{named('manifests')} DIR and {named('image_archive')} TAR "
                                     "(neither: the reference's)")
        return cls.from_dict(given, kind)

    def problems(self, kind: Kind) -> list[str]:
        found = []
        if self.variant != registry.REFERENCE and (
                reason := replace(self, variant=registry.REFERENCE).cannot_be(
                    kind, self.variant)) is not None:
            found.append(reason)
        if not (self.manifests / "kustomization.yaml").is_file():
            found.append(f"in-cluster {kind} manifests {self.manifests} have no "
                         "kustomization.yaml: give a kustomize directory (like deploy/"
                         f"{kind.spec.manifests.name} in the repository)")
        if self.image_archive is None and self.manifests != kind.spec.manifests:
            found.append(f"in-cluster {kind} manifests {self.manifests} need the image "
                         f"archive of their images (--zp-{kind}-image-archive TAR, made by "
                         "`docker save`)")
        elif self.image_archive is not None and not self.image_archive.is_file():
            found.append(f"in-cluster {kind} image archive {self.image_archive} is not a "
                         "file: give the archive `docker save` wrote")
        return found

    def label(self, kind: Kind) -> str:
        images = self.image_archive or "the reference images"
        variant = "" if self.variant == registry.REFERENCE else f", variant {self.variant}"
        return f"in-cluster {kind} from {self.manifests} ({images}{variant})"

    def start(self, component: C, launcher: Launcher[C, T]) -> T:
        return launcher.workloads(component, self)

    def fixed(self, kind: Kind) -> Mapping[str, str]:
        return kind.spec.fixed_in_cluster

    def command(self, kind: Kind) -> str:
        raise errors.ConfigError(f"the {self.label(kind)} is deployed by its manifests: the "
                                 "suite starts no command")

    def implementation(self, kind: Kind) -> registry.Implementation | None:
        return registry.implementation(kind, registry.REFERENCE) if self.reference else None

    def cannot_be(self, kind: Kind, variant: str) -> str | None:
        if not self.reference or not kind.spec.in_cluster_variants:
            return (f"the {self.label(kind)} runs its images, not variants (broken variants run "
                    f"as host processes): run {variant!r} with --zp-components host")
        return Source.cannot_be(self, kind, variant)

    def with_variant(self, kind: Kind, variant: str) -> InCluster:
        if (reason := self.cannot_be(kind, variant)) is not None:
            raise errors.ConfigError(reason)
        return replace(self, variant=variant)

    # -- as workloads ------------------------------------------------------------------------
    def render(self, kind: Kind) -> tuple[Path, Rendered]:
        """The archive to load and the manifests rendered with its images (the reference
        images by their built references) and, for a webhook, a fresh serving certificate."""
        archive, overrides = self.image_archive, {}
        if archive is None:
            built = build_component_images(progress=lambda _: None)
            archive = built.archive
            overrides = {ref.rsplit(":", 1)[0]: ref for _, ref in built.images}
        return archive, render_manifests(self.manifests, images=overrides,
                                        tls_dir="tls" if kind.spec.serves else None)

    def describe(self) -> dict[str, str]:
        return {"manifests": str(self.manifests)}
