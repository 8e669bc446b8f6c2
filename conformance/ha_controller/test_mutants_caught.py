"""Each conformance check can fail: every broken controller variant fails the suite.

Slow (the suite once per variant, ~11 min on 2 cores), so it runs only when selected:
``pytest conformance/ha_controller -m mutants`` (or ``zoneproof mutants controller``).
"""

from __future__ import annotations

import pytest

from zoneproof.cli import mutants


@pytest.mark.mutants
def test_every_controller_mutant_is_caught(request: pytest.FixtureRequest) -> None:
    if "mutants" not in str(request.config.getoption("markexpr") or ""):
        pytest.skip("slow: runs the suite per variant; select it with -m mutants")
    results = mutants.check_component("controller", progress=print)
    assert mutants.problems(results) == [], results
