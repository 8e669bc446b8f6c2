"""A registered implementation (the reference, or one a vendor registered) run as one of its
variants; the suite starts its command template with ``{variant}`` filled in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, TypeVar

from zoneproof import errors
from zoneproof.components.harness import registry
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Launcher, Source

__all__ = ["Registered"]

T = TypeVar("T")
C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Registered(Source):
    """An implementation of the component registry, started as one of its variants."""

    implementation_name: str = registry.REFERENCE
    variant: str = registry.REFERENCE
    name: ClassVar[str] = "registered"
    default: ClassVar[bool] = True
    options: ClassVar[tuple[Option, ...]] = (
        Option("name", "a registered implementation of {title} (entry-point group "
               f"{registry.GROUP})", metavar="NAME", default=registry.REFERENCE, flags=False),
        Option("variant", "a variant of the reference {kind}", metavar="NAME",
               default=registry.REFERENCE,
               conflict="{option} names a variant of the reference {kind}; with {chosen} that "
                        "component is under test (build the variant into it)",
               elsewhere="broken variants run as host processes"))

    def to_dict(self) -> dict[str, str]:
        return {"name": self.implementation_name, "variant": self.variant}

    @classmethod
    def from_dict(cls, data: Mapping[str, str], kind: Kind) -> Registered:
        return cls(data.get("name", registry.REFERENCE), data.get("variant", registry.REFERENCE))

    def problems(self, kind: Kind) -> list[str]:
        try:
            registry.implementation(kind, self.implementation_name).check_variant(self.variant)
        except errors.ConfigError as exc:
            return [str(exc)]
        return []

    def label(self, kind: Kind) -> str:
        return f"{kind} {self.implementation_name!r} (variant {self.variant})"

    def start(self, component: C, launcher: Launcher[C, T]) -> T:
        return launcher.process(component)

    def command(self, kind: Kind) -> str:
        return registry.implementation(kind, self.implementation_name).command

    def implementation(self, kind: Kind) -> registry.Implementation:
        return registry.implementation(kind, self.implementation_name)

    def with_variant(self, kind: Kind, variant: str) -> Registered:
        if (reason := self.cannot_be(kind, variant)) is not None:
            raise errors.ConfigError(reason)
        return replace(self, variant=variant)
