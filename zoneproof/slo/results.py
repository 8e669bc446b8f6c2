"""Judging one measured value against one SLO."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zoneproof.slo.spec import Slo

__all__ = ["SloResult", "SloStatus", "evaluate"]


class SloStatus(enum.StrEnum):
    """Outcome of one SLO; only PASS counts as met (NO_DATA passes only where allowed)."""

    PASS = "PASS"
    FAIL = "FAIL"
    NO_DATA = "NO_DATA"
    INVALID = "INVALID"
    VOID = "VOID"
    """The run cannot be judged by this SLO at all (e.g. its traffic before the fault was
    under the minimum rate): not a pass, not a measured failure."""
    NOT_RUN = "NOT_RUN"
    """The run ended before it could be judged (a signal interrupted it): never a pass."""


@dataclass(frozen=True, slots=True)
class SloResult:
    """An SLO's verdict with what was observed."""

    name: str
    status: SloStatus
    observed: float | None
    threshold: float
    unit: str
    message: str

    @property
    def met(self) -> bool:
        """True for PASS."""
        return self.status is SloStatus.PASS

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the one form of a result in the journal, JUnit properties and
        summary.json."""
        return {"name": self.name, "status": str(self.status), "observed": self.observed,
                "threshold": self.threshold, "unit": self.unit, "message": self.message}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SloResult:
        """The result ``to_dict`` wrote."""
        observed = data["observed"]
        return cls(str(data["name"]), SloStatus(data["status"]),
                   None if observed is None else float(observed), float(data["threshold"]),
                   str(data["unit"]), str(data.get("message", "")))


def evaluate(slo: Slo, observed: float | None) -> SloResult:
    """PASS if ``observed`` <= max; NO_DATA fails unless the SLO allows it; NaN is INVALID."""
    if observed is None:
        status = SloStatus.PASS if slo.allow_no_data else SloStatus.NO_DATA
        message = "no measurement" + (" (allowed)" if slo.allow_no_data else (
            ": the experiment did not produce this figure; where the cluster cannot give it "
            "(e.g. no readable API server audit log), accept that explicitly with "
            f"'allow_no_data: true' for {slo.name} in an SLO file (qualify --slo-file, "
            "--zp-slo-file)"))
        return SloResult(slo.name, status, None, slo.max, slo.unit, message)
    if math.isnan(observed) or observed < 0:
        return SloResult(slo.name, SloStatus.INVALID, observed, slo.max, slo.unit,
                         f"measured {observed!r} is not a valid {slo.unit} value")
    met = observed <= slo.max
    relation = "<=" if met else ">"
    return SloResult(slo.name, SloStatus.PASS if met else SloStatus.FAIL, observed, slo.max,
                     slo.unit, f"{slo.metric} = {observed:g} {slo.unit} {relation} {slo.max:g}")
