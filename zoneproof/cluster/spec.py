"""What a test-bed cluster looks like: zones, nodes, etcd members, node-lifecycle timings.

Only what every backend means; a backend's own knobs (local: ports, kwok per zone) are its
options (``interface.BackendOption``), validated and stored by that backend.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from zoneproof import errors
from zoneproof.runs.ownership import NAME_PATTERN

__all__ = ["DEFAULT_ZONES", "NAME_PATTERN", "ClusterSpec", "Timings", "parse_zones"]

DEFAULT_ZONES = ("zone-a", "zone-b", "zone-c")
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")


def parse_zones(text: str) -> tuple[str, ...]:
    """Zones from ``zone-a,zone-b``: ConfigError on an empty entry (``a,,b``, a trailing
    comma) rather than silently fewer zones."""
    zones = tuple(z.strip() for z in text.split(","))
    if not text.strip() or not all(zones):
        raise errors.ConfigError(f"zone list {text!r} has an empty entry: write the zones "
                                 "comma-separated without empty ones, e.g. zone-a,zone-b,zone-c")
    return zones


@dataclass(frozen=True, slots=True)
class Timings:
    """Node-lifecycle and etcd timings (seconds). Defaults are test-friendly, far below
    upstream's (``upstream()``): node-monitor-period 5 s, node-monitor-grace-period 50 s,
    not-ready/unreachable toleration 300 s, kubelet node lease 40 s, etcd election 1 s.

    They are what a bed states: faults' effects must show within bounds derived from them
    (``zoneproof.faults.effects``).
    """

    node_monitor_period_s: float = 1.0
    node_monitor_grace_period_s: float = 8.0
    toleration_s: int = 30
    node_lease_duration_s: int = 4
    etcd_election_timeout_s: float = 1.0

    @classmethod
    def upstream(cls) -> Timings:
        """Kubernetes' and etcd's own defaults (what a cluster zoneproof did not make is
        assumed to run)."""
        return cls(node_monitor_period_s=5.0, node_monitor_grace_period_s=50.0,
                   toleration_s=300, node_lease_duration_s=40, etcd_election_timeout_s=1.0)

    def problems(self) -> list[str]:
        """Every inconsistency, as messages naming the field and the fix."""
        found = []
        for name, value in asdict(self).items():
            if value <= 0:
                found.append(f"timings.{name} must be > 0, got {value}")
        if self.node_monitor_grace_period_s <= self.node_monitor_period_s:
            found.append("timings.node_monitor_grace_period_s must exceed node_monitor_period_s")
        if self.node_lease_duration_s >= self.node_monitor_grace_period_s:
            found.append("timings.node_lease_duration_s must be below node_monitor_grace_period_s, "
                         "or healthy nodes flap NotReady between lease renewals")
        if self.etcd_election_timeout_s < 0.5:
            found.append("timings.etcd_election_timeout_s must be >= 0.5: etcd needs 5 x its "
                         "heartbeat interval (100 ms on the beds)")
        return found


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A multi-zone test bed: ``nodes_per_zone`` nodes in each of ``zones``."""

    name: str = "zoneproof"
    zones: tuple[str, ...] = DEFAULT_ZONES
    nodes_per_zone: int = 2
    region: str = "region-1"
    etcd_members: int = 3
    timings: Timings = field(default_factory=Timings)

    def problems(self) -> list[str]:
        """Every problem with this spec (empty when valid)."""
        found = []
        if not NAME_PATTERN.match(self.name):
            found.append(f"name {self.name!r} must be 1-40 lowercase letters, digits or '-'")
        if not self.zones:
            found.append("zones must name at least one zone")
        if len(set(self.zones)) != len(self.zones):
            found.append(f"zones {list(self.zones)} contain duplicates")
        found += [f"zone {z!r} is not a valid label value" for z in self.zones
                  if not _LABEL_VALUE.match(z)]
        if not _LABEL_VALUE.match(self.region):
            found.append(f"region {self.region!r} is not a valid label value")
        if not 1 <= self.nodes_per_zone <= 500:
            found.append(f"nodes_per_zone must be 1..500, got {self.nodes_per_zone}")
        if self.etcd_members not in (1, 3, 5):
            found.append(f"etcd_members must be 1, 3 or 5 (an odd quorum), got {self.etcd_members}")
        return found + self.timings.problems()

    def validate(self) -> ClusterSpec:
        """Return self, or raise ConfigError listing every problem."""
        if found := self.problems():
            raise errors.ConfigError("invalid cluster spec:\n  - " + "\n  - ".join(found))
        return self

    def node_names(self, zone: str) -> list[str]:
        """The node names of ``zone``: ``<zone>-node-<i>``."""
        return [f"{zone}-node-{i}" for i in range(1, self.nodes_per_zone + 1)]

    def nodes_by_zone(self) -> dict[str, list[str]]:
        """Zone → node names, in zone order."""
        return {zone: self.node_names(zone) for zone in self.zones}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (state files)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClusterSpec:
        """Inverse of to_dict; ConfigError names keys that are no spec field."""
        spec, others = cls.from_stored(data)
        if others:
            raise errors.ConfigError(f"cluster spec has unknown field(s) {sorted(others)}: "
                                     f"its fields are {[f.name for f in fields(cls)]}")
        return spec

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> tuple[ClusterSpec, dict[str, Any]]:
        """A spec from a state file, and its keys that are no spec field (a state written
        when a backend's options were still spec fields: the backend reads them back)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["zones"] = tuple(values.get("zones", DEFAULT_ZONES))
        values["timings"] = Timings(**values.get("timings", {}))
        return cls(**values), {k: v for k, v in data.items() if k not in known}
