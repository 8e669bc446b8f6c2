"""Every broken webhook variant fails the live conformance suite; the reference passes it.

One local cluster serves all runs; each variant is a separate pytest run of
``test_cases.py`` that stops at its first failure. Slow (minutes): skipped unless
selected with ``-m mutants`` (or run ``zoneproof mutants webhook``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.slo.verdict import not_applicable
from zoneproof.suites import mutants

pytestmark = pytest.mark.mutants


def test_every_broken_variant_is_caught_live(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if "mutants" not in (request.config.getoption("markexpr") or ""):
        pytest.skip(not_applicable("runs the live suite once per variant (minutes): select it "
                                   "with -m mutants"))
    runs = mutants.run_mutants("webhook", workdir=tmp_path, progress=print)
    print(mutants.format_table(runs))
    found = mutants.problems(runs)
    assert not found, "\n\n".join(found)
