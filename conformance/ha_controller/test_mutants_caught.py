"""Each conformance check can fail: every broken controller variant fails the suite.

Slow (the suite once per variant, ~11 min on 2 cores), so it runs only when selected:
``pytest conformance/ha_controller -m mutants`` (or ``zoneproof mutants controller``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.slo.verdict import not_applicable
from zoneproof.suites import mutants


@pytest.mark.mutants
def test_every_controller_mutant_is_caught(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if "mutants" not in str(request.config.getoption("markexpr") or ""):
        pytest.skip(not_applicable("slow: runs the suite per variant; select it with -m mutants"))
    runs = mutants.run_mutants("controller", workdir=tmp_path, progress=print)
    print(mutants.format_table(runs))
    found = mutants.problems(runs)
    assert not found, "\n\n".join(found)
