"""The local backend's own options: where its block of ports starts, kwok per node or zone,
and its layout: ``flat`` (every process on loopback, the control plane in no zone) or
``zones`` (a control plane per zone, each zone in network namespaces of its own:
``netns``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast, get_args

from zoneproof import errors
from zoneproof.cluster.interface import BackendOption

__all__ = ["OPTIONS", "KwokPer", "Layout", "LocalOptions"]

KwokPer = Literal["node", "zone"]
_KWOK_PER: tuple[str, ...] = get_args(KwokPer)
Layout = Literal["flat", "zones"]
_LAYOUTS: tuple[str, ...] = get_args(Layout)
_PORTS = range(1024, 65001)

#: What ``zoneproof up`` offers for the local backend (``--port-base``, ``--kwok-per``).
OPTIONS = (
    BackendOption("port-base", "first of a block of loopback ports (default: a free block "
                  "from 21000)", metavar="PORT"),
    BackendOption("kwok-per", "one kwok (fake kubelet) process per node, or per zone for large "
                  "beds (default: node)", choices=_KWOK_PER),
    BackendOption("layout", "flat: every process on loopback, the control plane in no zone "
                  "(default); zones: an etcd member, kube-apiserver, kcm and scheduler per zone "
                  "behind a load balancer, each zone in network namespaces of its own whose "
                  "links can be cut or slowed (root only)", choices=_LAYOUTS),
)


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """How a local bed is laid out on this host (part of what ``up`` compares)."""

    #: First of a block of consecutive loopback ports; None picks a free block.
    port_base: int | None = None
    #: One kwok (fake kubelet) process per node, or per zone (for large beds).
    kwok_per: KwokPer = "node"
    #: ``flat`` or ``zones`` (a failure domain per zone, control plane and links included).
    layout: Layout = "flat"

    def problems(self) -> list[str]:
        """Every problem, naming the flag and the valid values."""
        found = []
        if self.port_base is not None and self.port_base not in _PORTS:
            found.append(f"--port-base must be {_PORTS.start}..{_PORTS.stop - 1}, got "
                         f"{self.port_base}")
        if self.kwok_per not in _KWOK_PER:
            found.append(f"--kwok-per must be {' or '.join(_KWOK_PER)}, got {self.kwok_per!r}")
        if self.layout not in _LAYOUTS:
            found.append(f"--layout must be {' or '.join(_LAYOUTS)}, got {self.layout!r}")
        if self.layout == "zones" and self.port_base is not None:
            found.append("--port-base does not apply to --layout zones (each zone listens on "
                         "its own addresses): drop it")
        return found

    def validate(self) -> LocalOptions:
        """Return self, or raise ConfigError listing every problem."""
        if found := self.problems():
            raise errors.ConfigError("invalid local backend options: " + "; ".join(found))
        return self

    @classmethod
    def parse(cls, given: Mapping[str, str]) -> LocalOptions:
        """Options from their flags' text (``port-base``, ``kwok-per``, ``layout``), validated."""
        base = given.get("port-base")
        if base is not None and not base.strip().isdigit():
            raise errors.ConfigError(f"--port-base takes a port number, got {base!r}: pass "
                                     "--port-base N, or omit it to pick a free block")
        return cls(port_base=None if base is None else int(base),
                   kwok_per=cast(KwokPer, given.get("kwok-per", "node")),
                   layout=cast(Layout, given.get("layout", "flat"))).validate()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (state files)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LocalOptions:
        """Inverse of to_dict."""
        return cls(port_base=data.get("port_base"), kwok_per=data.get("kwok_per", "node"),
                   layout=data.get("layout", "flat"))
