"""Label selector parsing and matching, with the API server's semantics."""

from __future__ import annotations

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_controller import selectors


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=noobaa", {"app": "noobaa"}, True),
        ("app=noobaa", {"app": "other"}, False),
        ("app=noobaa", {}, False),
        ("app==noobaa", {"app": "noobaa"}, True),
        ("app!=noobaa", {"app": "noobaa"}, False),
        ("app!=noobaa", {"app": "x"}, True),
        ("app!=noobaa", {}, True),  # absent key satisfies !=
        ("tier in (db, core)", {"tier": "db"}, True),
        ("tier in (db,core)", {"tier": "web"}, False),
        ("tier in (db,core)", {}, False),
        ("tier notin (db,core)", {"tier": "web"}, True),
        ("tier notin (db,core)", {"tier": "db"}, False),
        ("tier notin (db,core)", {}, True),  # absent key satisfies notin
        ("canary", {"canary": ""}, True),
        ("canary", {}, False),
        ("!canary", {}, True),
        ("! canary", {"canary": "yes"}, False),
        ("app=noobaa,tier in (db,core),!canary", {"app": "noobaa", "tier": "db"}, True),
        ("app=noobaa,tier in (db,core),!canary",
         {"app": "noobaa", "tier": "db", "canary": "1"}, False),
        ("noobaa.io/role=db", {"noobaa.io/role": "db"}, True),
        ("app=", {"app": ""}, True),
        ("", {"anything": "x"}, True),
    ],
)
def test_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    assert selectors.parse_selector(text).matches(labels) is expected


def test_none_labels_are_empty() -> None:
    assert selectors.parse_selector("!app").matches(None)
    assert not selectors.parse_selector("app").matches(None)


@pytest.mark.parametrize(
    "text",
    ["app=no baa", "=x", "app in ()", "app in (a,b", "-bad=x", "a,,b", "app=x/y",
     "app > 3", "x" * 64 + "=v", "app=" + "v" * 64],
)
def test_rejects_malformed(text: str) -> None:
    with pytest.raises(errors.ConfigError, match="invalid label selector"):
        selectors.parse_selector(text)


def test_error_names_every_bad_term() -> None:
    with pytest.raises(errors.ConfigError) as info:
        selectors.parse_selector("good=1,bad term,=x")
    assert "'bad term'" in str(info.value) and "'=x'" in str(info.value)


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("app=noobaa", "app=noobaa"),
        ("app==noobaa", "app=noobaa"),
        ("app != x", "app!=x"),
        ("tier in (core, db)", "tier in (core,db)"),
        ("tier notin (b,a)", "tier notin (a,b)"),
        ("canary,!debug", "canary,!debug"),
    ],
)
def test_query_round_trips(text: str, query: str) -> None:
    parsed = selectors.parse_selector(text)
    assert parsed.to_query() == query
    assert selectors.parse_selector(query) == parsed


def test_empty_selector_is_empty() -> None:
    assert selectors.parse_selector("  ").is_empty
    assert not selectors.parse_selector("app").is_empty
