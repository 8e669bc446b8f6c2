"""The port block of one local bed (choosing it: ``zoneproof._util.ports``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Ports", "ports_needed"]


@dataclass(frozen=True, slots=True)
class Ports:
    """Every port one local bed listens on."""

    etcd_client: tuple[int, ...]
    etcd_peer: tuple[int, ...]
    apiserver: int
    controller_manager: int
    scheduler: int

    @classmethod
    def from_base(cls, base: int, etcd_members: int) -> Ports:
        """Consecutive ports from ``base``: etcd clients, etcd peers, apiserver, kcm, scheduler."""
        n = etcd_members
        return cls(
            etcd_client=tuple(range(base, base + n)),
            etcd_peer=tuple(range(base + n, base + 2 * n)),
            apiserver=base + 2 * n,
            controller_manager=base + 2 * n + 1,
            scheduler=base + 2 * n + 2,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ports:
        """Inverse of to_dict (JSON turns tuples into lists)."""
        return cls(etcd_client=tuple(data["etcd_client"]), etcd_peer=tuple(data["etcd_peer"]),
                   apiserver=data["apiserver"], controller_manager=data["controller_manager"],
                   scheduler=data["scheduler"])

    def all(self) -> list[int]:
        """Every port, in block order."""
        return [*self.etcd_client, *self.etcd_peer, self.apiserver, self.controller_manager,
                self.scheduler]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return asdict(self)


def ports_needed(etcd_members: int) -> int:
    """Size of the block a bed with ``etcd_members`` members needs."""
    return 2 * etcd_members + 3
