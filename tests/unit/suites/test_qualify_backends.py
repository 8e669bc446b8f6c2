"""qualify decides by a backend's traits: which backend's own tests run, what is prepared."""

from __future__ import annotations

import pytest

from zoneproof import cluster
from zoneproof.suites import qualify


@pytest.mark.parametrize(("name", "markers"), [
    ("local", "not mutants and not long and not kind"),
    ("existing", "not mutants and not long and not kind"),
    ("kind", "not mutants and not long"),
])
def test_a_backends_own_tests_run_only_when_qualifying_it(name: str, markers: str) -> None:
    assert qualify._markers(cluster.get_backend(name)) == markers
