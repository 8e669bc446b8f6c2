"""JSON Patch: diff + apply round-trips; apply follows RFC 6902 on the operations it supports."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zoneproof.components.reference.ha_config import patches

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=4), children, max_size=4)),
    max_leaves=20)


@given(json_values, json_values)
def test_diff_then_apply_gives_the_new_document(old: Any, new: Any) -> None:
    assert patches.apply(old, patches.diff(old, new)) == new


def test_diff_of_equal_documents_is_empty() -> None:
    assert patches.diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []


def test_diff_escapes_pointer_tokens() -> None:
    ops = patches.diff({}, {"a/b~c": 1})
    assert ops == [{"op": "add", "path": "/a~1b~0c", "value": 1}]


def test_apply_supports_rfc_6902_examples() -> None:
    doc: Any = {"foo": ["bar", "baz"], "q": {"x": 1}}
    ops: list[dict[str, Any]] = [
        {"op": "add", "path": "/foo/1", "value": "qux"},
        {"op": "add", "path": "/foo/-", "value": "end"},
        {"op": "remove", "path": "/foo/0"},
        {"op": "replace", "path": "/q/x", "value": 2},
        {"op": "copy", "from": "/q", "path": "/r"},
        {"op": "move", "from": "/r/x", "path": "/s"},
        {"op": "test", "path": "/s", "value": 2},
    ]
    assert patches.apply(doc, ops) == {"foo": ["qux", "baz", "end"], "q": {"x": 2}, "r": {}, "s": 2}
    assert doc == {"foo": ["bar", "baz"], "q": {"x": 1}}, "the input is not modified"


@pytest.mark.parametrize("op", [
    {"op": "remove", "path": "/missing"},
    {"op": "replace", "path": "/a/5", "value": 1},
    {"op": "add", "path": "a", "value": 1},
    {"op": "add", "path": "/a/01", "value": 1},
    {"op": "test", "path": "/a/0", "value": 9},
    {"op": "frobnicate", "path": "/a"},
    {"op": "move", "path": "/b"},
])
def test_apply_rejects_bad_operations(op: dict[str, Any]) -> None:
    with pytest.raises(patches.PatchError):
        patches.apply({"a": [1]}, [op])
