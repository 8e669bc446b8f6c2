"""The model's label selectors: the API server's semantics, and labels that miss."""

from __future__ import annotations

import pytest

from zoneproof import errors
from zoneproof.conformance.ha_controller import generate, labels


@pytest.mark.parametrize(("selector", "matching", "missing"), [
    ("app=noobaa", {"app": "noobaa", "x": "y"}, {"app": "noobaa-core"}),
    ("app==noobaa", {"app": "noobaa"}, {}),
    ("app!=db", {}, {"app": "db"}),
    ("app in (noobaa, core)", {"app": "core"}, {"app": "db"}),
    ("app notin (db)", {"other": "1"}, {"app": "db"}),
    ("app", {"app": ""}, {"App": "noobaa"}),
    ("!canary", {"app": "x"}, {"canary": "1"}),
    ("app=noobaa,tier in (a,b),!canary", {"app": "noobaa", "tier": "b"},
     {"app": "noobaa", "tier": "b", "canary": ""}),
])
def test_requirements_read_as_the_api_server_reads_them(
        selector: str, matching: dict[str, str], missing: dict[str, str]) -> None:
    parsed = labels.parse(selector)
    assert parsed.matches(matching) and not parsed.matches(missing)


@pytest.mark.parametrize("selector", ["app=noobaa", "app in (noobaa,core),tier!=db",
                                      "app,!canary", "app notin (x)"])
def test_satisfying_labels_match_and_every_miss_misses(selector: str) -> None:
    parsed = labels.parse(selector)
    assert parsed.matches(parsed.satisfying())
    misses = parsed.misses()
    assert misses and not any(parsed.matches(m) for m in misses)


def test_equality_is_missed_every_way_and_a_bad_requirement_is_named() -> None:
    assert labels.parse("app=noobaa").misses() == [
        {}, {"app": "noobaa-x"}, {"app": "NOOBAA"}, {"APP": "noobaa"}]
    with pytest.raises(errors.ConfigError, match="'app in'"):
        labels.parse("app in")


@pytest.mark.parametrize("shape", labels.SHAPES)
def test_every_drawn_selector_has_pods_to_act_on_and_pods_to_leave(shape: str) -> None:
    selector = labels.parse(shape)
    assert selector.matches(selector.satisfying())
    assert selector.misses() and not any(selector.matches(m) for m in selector.misses())


def _equality_only(text: str) -> labels.Selector:
    """A controller that reads only ``k=v`` terms and ignores the others (a blind bug)."""
    return labels.Selector(tuple(r for r in labels.parse(text).requirements if r.op == "="))


def test_a_controller_that_reads_only_equality_terms_deletes_a_pod_the_model_forbids() -> None:
    """Each shape has a pod the model leaves alone that such a controller would select; and
    the batches draw every shape."""
    wider = [s for s in labels.SHAPES if any(_equality_only(s).matches(m) for m in labels.parse(s).misses())]
    assert set(wider) == set(labels.SHAPES)
    drawn = {labels.drawn(seed) for seed in range(50)}
    assert drawn == set(labels.SHAPES)


@pytest.mark.parametrize("shape", labels.SHAPES)
def test_pods_to_act_on_match_every_way_the_selector_allows(shape: str) -> None:
    """Chosen pods do not all carry the smallest labels: a set's other values, a negative
    requirement's key with an allowed value, an existence with an empty value, an extra
    label (a blind mutant matching only the first value of ``in`` passed every batch)."""
    selector = labels.parse(shape)
    matching = selector.matching()
    assert matching[0] == selector.satisfying()
    assert all(selector.matches(m) for m in matching) and len(matching) >= 2
    for r in selector.requirements:
        if r.op == "in":
            assert {m[r.key] for m in matching} == set(r.values)
        if r.op in ("!=", "notin") and r.key not in matching[0]:
            assert any(r.key in m for m in matching)


@pytest.mark.parametrize("shape", labels.SHAPES)
def test_every_drawn_selector_holds_every_kind_of_requirement(shape: str) -> None:
    """One shape per batch, each with a set, an equality, an inequality, an existence and a
    non-existence: every batch meets each one's semantics; its ways fit what is drawn."""
    selector = labels.parse(shape)
    ops = {r.op for r in selector.requirements}
    assert {"in", "=", "exists", "!"} <= ops and ops & {"!=", "notin"}
    assert len(selector.misses()) <= generate.MISSES
    assert len(selector.matching()) <= len(generate.MATCHING_WAYS)
