"""The webhook's component configuration (spec: "Component configuration"): toleration seconds."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TolerationDefaults"]


@dataclass(frozen=True, slots=True)
class TolerationDefaults:
    """``defaultNotReadyTolerationSeconds`` and ``defaultUnreachableTolerationSeconds``
    (None: that toleration is not added)."""

    not_ready_toleration_seconds: int | None = None
    unreachable_toleration_seconds: int | None = None
