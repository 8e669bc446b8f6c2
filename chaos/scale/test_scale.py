"""The scale profile: the HA controller under test at a stated size, judged by SLOs.

Runs only when asked (``--zp-scale N``, ``zoneproof qualify --scale N``): a fresh
kwok-per-zone bed of N nodes in each of 3 zones and ``--zp-scale-pods`` pods dealt over them
(default 100 × N; half matching the selector), the controller under test leading with
client-go's Lease timings, zone a down. Judged: ``scale-first-delete`` (p99 of each node's
first force-delete after its NotReady) and ``scale-zone-completion`` (the zone's last
force-delete as a multiple of the earliest any controller could finish at the raw parallel
delete rate the API server gave, measured on the same bed right after). Every other figure
goes to the JUnit properties.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from zoneproof_fixtures.settings import Settings

from zoneproof.bench import scale
from zoneproof.report import junit
from zoneproof.slo import SloStatus, evaluate
from zoneproof.slo.verdict import not_applicable

pytestmark = [pytest.mark.destructive, pytest.mark.xdist_group("scale")]

#: SLO name → the profile's figure it bounds.
JUDGED = {"scale-first-delete": "reaction_p99_seconds",
          "scale-zone-completion": "completion_to_earliest_ratio"}


@pytest.mark.parametrize("profile", ["zone-outage-at-scale"])  # its name in reports
def test_zone_outage_at_scale(profile: str, zp_settings: Settings, tmp_path: Path,
                              record_property: Callable[[str, object], None]) -> None:
    """Zone a of the scale bed down: the controller's first deletes and completion meet
    their SLOs."""
    n = zp_settings.scale
    if not n:
        pytest.skip(not_applicable("the scale profile runs only when asked: --zp-scale "
                                   "NODES_PER_ZONE (zoneproof qualify --scale N)"))
    workdir = zp_settings.report_dir / "chaos" / profile if zp_settings.report_dir else tmp_path
    pods = zp_settings.scale_pods
    record_property("scale bed", f"{3 * n} kwok nodes (3 zones), {pods} pods")
    measured = scale.outage_at_scale(n, pods, print, workdir, controller=zp_settings.controller)
    for name, value in sorted(measured.items()):
        record_property(*junit.figure_property(name, value))
    results = [evaluate(zp_settings.slos.get(slo), measured.get(figure))
               for slo, figure in JUDGED.items()]
    for result in results:
        record_property(*junit.slo_property(result))
    print("\n".join(r.message for r in results))
    failed = [f"{r.name}: {r.message}" for r in results if r.status is not SloStatus.PASS]
    assert not failed, (f"at {3 * n} nodes / {pods} pods: " + "; ".join(failed)
                        + f" (logs: {workdir})")
