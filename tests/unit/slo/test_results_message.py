"""A NO_DATA result names the fix: an SLO file allowing no data, by the SLO's name."""

from zoneproof.slo.results import SloStatus, evaluate
from zoneproof.slo.spec import Slo


def test_no_data_names_the_slo_file_fix_and_allowed_passes() -> None:
    slo = Slo("concurrent-actors", "concurrent_actors", 1, "count", "")
    result = evaluate(slo, None)
    assert result.status is SloStatus.NO_DATA
    assert "allow_no_data: true" in result.message and "concurrent-actors" in result.message
    assert "--slo" in result.message
    allowed = evaluate(Slo("concurrent-actors", "concurrent_actors", 1, "count", "",
                           allow_no_data=True), None)
    assert allowed.status is SloStatus.PASS and "(allowed)" in allowed.message
