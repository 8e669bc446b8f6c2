"""``zoneproof mutants``: verdicts, option validation, the pytest command line (no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.cli import mutants
from zoneproof.components.ha_controller import variants


def test_every_broken_controller_variant_is_a_mutant() -> None:
    assert set(mutants.TARGETS["controller"].mutants) == set(variants.VARIANTS) - {"reference"}


def test_problems_name_a_failing_reference_and_each_survivor() -> None:
    assert mutants.problems({"reference": False, "a": True}) == []
    assert mutants.problems({"reference": True, "a": False, "b": True}) == [
        "reference fails the suite", "a survived"]


def test_unknown_only_names_list_the_valid_ones() -> None:
    with pytest.raises(errors.ConfigError, match="no-reconcile"):
        mutants.check_component("controller", ["nope"])


def test_run_mutants_passes_the_variant_option_and_reads_the_verdict(tmp_path: Path) -> None:
    suite = tmp_path / "test_suite.py"
    suite.write_text("def test_variant(request):\n"
                     "    assert request.config.getoption('zp_controller_variant') != "
                     "'no-reconcile'\n")
    results = mutants.run_mutants("controller", ["reference", "no-reconcile"], [str(suite)],
                                  "--zp-controller-variant", ["--rootdir", str(tmp_path)])
    assert results == {"reference": False, "no-reconcile": True}


def test_a_suite_that_cannot_run_is_no_verdict(tmp_path: Path) -> None:
    with pytest.raises(errors.ZoneproofError, match="no verdict"):
        mutants.run_mutants("controller", ["reference"], [str(tmp_path / "missing.py")],
                            "--zp-controller-variant", [])
