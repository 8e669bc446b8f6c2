"""The modelled API-server selection: rules, namespaceSelector, objectSelector on CREATE and UPDATE."""

import pytest

from zoneproof.conformance.ha_config import selection
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config import registration as config

WEBHOOK = config.render_webhook(ca_bundle=b"ca", url="https://x")
CONSIDER = {keys.LABEL_CONSIDER: "true"}
SKIP = {keys.LABEL_SKIP: "false"}


def call(operation: str = "CREATE", *, ns: dict[str, str] | None = None, labels: dict[str, str] | None = None,
         old: dict[str, str] | None = None, resource: tuple[str, str, str] = ("apps", "v1", "deployments"),
         subresource: str = "") -> selection.Call:
    group, version, plural = resource
    return selection.Call(group, version, plural, operation, "team", CONSIDER if ns is None else ns,
                          labels or {}, old, subresource)


@pytest.mark.parametrize(("selected", "case"), [
    (True, call()),
    (True, call("UPDATE", old={})),
    (True, call(resource=("autoscaling", "v2", "horizontalpodautoscalers"))),
    (True, call(resource=("apps", "v1", "statefulsets"))),
    (False, call("DELETE")),
    (False, call("CONNECT")),
    (False, call(resource=("apps", "v1", "daemonsets"))),
    (False, call(resource=("autoscaling", "v1", "horizontalpodautoscalers"))),
    (False, call(subresource="scale")),
    (False, call(subresource="status")),
    (False, call(ns={})),
    (False, call(ns={keys.LABEL_CONSIDER: "True"})),
    (False, call(labels=SKIP)),
    (True, call("UPDATE", labels=SKIP, old={})),     # adding skip on UPDATE: old object matches
    (True, call("UPDATE", labels={}, old=SKIP)),     # removing it: new object matches
    (False, call("UPDATE", labels=SKIP, old=SKIP)),
])
def test_selects(selected: bool, case: selection.Call) -> None:
    assert selection.selects(WEBHOOK, case) is selected


@pytest.mark.parametrize(("selector", "labels", "matches"), [
    ({}, {}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
])
def test_label_selector_semantics(selector: config.LabelSelector, labels: dict[str, str],
                                  matches: bool) -> None:
    assert selection.matches_selector(selector, labels) is matches


def test_namespace_name_label_is_implicit() -> None:
    webhook = config.render_webhook(ca_bundle=b"ca", url="https://x")
    webhook["namespaceSelector"] = {"matchExpressions": [
        {"key": keys.LABEL_METADATA_NAME, "operator": "NotIn", "values": ["team"]}]}
    assert not selection.selects(webhook, call())
