"""qualify decides by a backend's traits: which backend's own tests run, what is prepared."""

from __future__ import annotations

import pytest

from zoneproof import cluster
from zoneproof.suites import qualify


@pytest.mark.parametrize(("name", "markers"), [
    ("local", "not mutants and not long and not self_check and not kind"),
    ("existing", "not mutants and not long and not self_check and not kind"),
    ("kind", "not mutants and not long and not self_check"),
])
def test_a_backends_own_tests_run_only_when_qualifying_it(name: str, markers: str) -> None:
    assert qualify._markers(cluster.get_backend(name)) == markers
    with_self_check = qualify._markers(cluster.get_backend(name), self_check=True)
    assert with_self_check == markers.replace(" and not self_check", "")
