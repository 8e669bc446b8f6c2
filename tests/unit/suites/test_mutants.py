"""``zoneproof mutants``: verdicts from exit code + JUnit, option validation, real pytest runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.components.harness.component import Components
from zoneproof.components.harness.registry import Kind
from zoneproof.components.reference.ha_config import variants as webhook_variants
from zoneproof.components.reference.ha_controller import variants as controller_variants
from zoneproof.suites import mutants


def test_every_broken_variant_is_a_mutant() -> None:
    """The variants come from the component registry: the reference's own lists."""
    assert set(mutants.target("controller").mutants) == set(controller_variants.VARIANTS) - {"reference"}
    assert set(mutants.target("webhook").mutants) == set(webhook_variants.VARIANTS) - {"reference"}
    assert mutants.target("webhook").correct == "reference"


def test_unknown_kind_or_implementation_lists_the_valid_ones() -> None:
    with pytest.raises(errors.ConfigError, match="choose one of webhook, controller"):
        mutants.target("operator")
    with pytest.raises(errors.ConfigError, match=r"registered: controller.reference, webhook.reference"):
        mutants.target("webhook", "acme")


def test_the_variant_goes_to_pytest_as_a_component() -> None:
    (arg,) = mutants.target("webhook").pytest_args("no-tolerations")
    chosen = Components.from_dict(arg.removeprefix("--zp-components="))
    assert chosen.webhook.variant == "no-tolerations"
    assert chosen.controller == Components().controller


def _run(variant: str, code: int, failed: str | None = None, errored: tuple[str, ...] = ()
         ) -> mutants.MutantRun:
    return mutants.MutantRun(variant, code, 1.0, failed, errored, "tail")


def test_mutant_verdicts_need_a_failed_test() -> None:
    assert _run("reference", 0).outcome == "ok"
    assert _run("reference", 1, "t").outcome == "BROKEN REFERENCE"
    assert _run("no-tolerations", 1, "t").outcome == "caught"
    assert _run("no-tolerations", 0).outcome == "SURVIVED"
    assert _run("no-tolerations", 1, "t", ("setup",)).outcome == "INVALID RUN"
    assert _run("no-tolerations", 4).outcome == "INVALID RUN"  # usage error
    assert _run("no-tolerations", -1).outcome == "INVALID RUN"  # timed out
    assert mutants.problems([_run("reference", 0), _run("no-tolerations", 1, "t")]) == []
    found = mutants.problems([_run("no-tolerations", 0)])
    assert len(found) == 1 and "expected failed, got passed" in found[0]
    table = mutants.format_table([_run("reference", 0), _run("no-tolerations", 1, "t[e15]")])
    assert "no-tolerations" in table and "t[e15]" in table and "1/1 broken variants caught" in table


def test_junit_outcomes(tmp_path: Path) -> None:
    report = tmp_path / "j.xml"
    report.write_text('<testsuites><testsuite><testcase name="a"/><testcase name="b"><failure/>'
                      '</testcase><testcase name="c"><error/></testcase></testsuite></testsuites>')
    assert mutants.junit_outcomes(report) == ("b", ("c",))
    assert mutants.junit_outcomes(tmp_path / "missing.xml")[1] != ()


def test_unknown_names_list_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="no-reconcile"):
        mutants.run_mutants("controller", ["nope"], workdir=tmp_path)


def test_run_variant_passes_the_component_and_reads_the_verdict(tmp_path: Path) -> None:
    suite = tmp_path / "test_suite.py"
    suite.write_text("def test_variant(zp_settings):\n"
                     "    assert zp_settings.components.controller.variant != 'no-reconcile'\n")
    target = mutants.Target((str(suite),), Kind.CONTROLLER, "reference", ("reference", "no-reconcile"))
    runs = [mutants.run_variant(target, v, cluster_name="never-made", workdir=tmp_path,
                                extra_args=["--rootdir", str(tmp_path)]) for v in target.variants]
    assert [r.outcome for r in runs] == ["ok", "caught"]
    assert runs[1].failed_test == "test_variant"


def test_a_suite_that_cannot_run_is_no_verdict(tmp_path: Path) -> None:
    target = mutants.Target((str(tmp_path / "missing.py"),), Kind.CONTROLLER, "reference", ("reference",))
    run = mutants.run_variant(target, "reference", cluster_name="never-made", workdir=tmp_path)
    assert run.outcome == "INVALID RUN"
