"""The generated webhook suite's runs in-process: only a run's first failure is shrunk (later
phases report their first failing input as drawn: a wrong webhook's live run would otherwise
spend up to hypothesis's 5 minutes per phase), and what one default phase's posts catch."""

from __future__ import annotations

import pytest

from zoneproof.components.reference.ha_config import variants
from zoneproof.conformance.ha_config import generated, model, reference
from zoneproof.specs.ha_config import facts, keys

WORLD = model.Facts(facts.NamespaceInfo("team", {keys.LABEL_CONSIDER: "true"},
                                         {keys.ANNOTATION_FAILURE_TOLERANCE_TYPE: ""}))


def phase(*, shrink: bool) -> generated.Phase:
    wrong = reference.Reference(variants.VARIANTS["controller-gets-two"])
    return generated.direct_posts(lambda body: wrong.review(body, WORLD), [WORLD], phase="p",
                                  examples=300, run_seed=7, replay="--zp-seed=7", shrink=shrink)


def test_the_first_failure_is_shrunk_and_a_later_one_is_reported_as_drawn() -> None:
    first, later = phase(shrink=True), phase(shrink=False)
    assert first.failure is not None and later.failure is not None
    assert "input shrunk by hypothesis" in first.failure.text
    assert "input as drawn: not shrunk" in later.failure.text
    assert later.examples < first.examples  # the shrinker's tries are judged inputs too


@pytest.mark.parametrize("run_seed", [0, 1, 2])
def test_generated_posts_catch_an_hpa_matched_on_any_apps_version(run_seed: int) -> None:
    """Drawn HPAs include near-misses differing from a target only in the apiVersion, so the
    posts of one default phase meet the variant that counts ``apps/v1beta1`` (they met it in
    none of 3,000 when near-misses were drawn freely)."""
    posted, _ = reference.generated_catch(variants.VARIANTS["hpa-any-apps-version"],
                                          examples=generated.BUDGETS["default"].examples, scenarios=1,
                                          run_seed=run_seed)
    assert posted is not None
