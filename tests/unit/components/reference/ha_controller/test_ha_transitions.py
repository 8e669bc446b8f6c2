"""Ready extraction, the full transition table, and which pods get deleted."""

from __future__ import annotations

import itertools

import pytest

from zoneproof.components.reference.ha_controller import selectors, transitions
from zoneproof.components.reference.ha_controller.testing import node, pod, to_model
from zoneproof.components.reference.ha_controller.transitions import ReadyState

T, F, U, M = ReadyState.TRUE, ReadyState.FALSE, ReadyState.UNKNOWN, ReadyState.MISSING
BEFORE = [None, T, F, U, M]
AFTER = [T, F, U, M]
ACTING = {(T, F), (T, U)}


@pytest.mark.parametrize("as_model", [False, True], ids=["dict", "model"])
@pytest.mark.parametrize(
    ("status", "expected"),
    [("True", T), ("False", F), ("Unknown", U), ("Weird", U), (None, M)],
)
def test_ready_state(status: str | None, expected: ReadyState, as_model: bool) -> None:
    raw = node("n1", status)
    obj = to_model(raw, "V1Node") if as_model else raw
    assert transitions.ready_state(obj) is expected
    assert transitions.node_name(obj) == "n1"
    assert transitions.resource_version(obj) == "1"


def test_ready_state_without_status() -> None:
    assert transitions.ready_state({"metadata": {"name": "n"}}) is M
    assert transitions.resource_version({}) is None


@pytest.mark.parametrize(("before", "after"), list(itertools.product(BEFORE, AFTER)))
def test_reference_table(before: ReadyState | None, after: ReadyState) -> None:
    assert transitions.triggers_action(before, after) is ((before, after) in ACTING)


@pytest.mark.parametrize(("before", "after"), list(itertools.product(BEFORE, AFTER)))
def test_broken_predicates_table(before: ReadyState | None, after: ReadyState) -> None:
    assert transitions.triggers_action(before, after, on_unknown=False) is (
        (before, after) == (T, F))
    assert transitions.triggers_action(before, after, on_false=False) is (
        (before, after) == (T, U))
    recovery = before in (F, U, M) and after is T
    assert transitions.triggers_action(before, after, on_recovery=True) is (
        (before, after) in ACTING or recovery)


@pytest.mark.parametrize(("state", "expected"), [(T, False), (F, True), (U, True), (M, False)])
def test_is_not_ready(state: ReadyState, expected: bool) -> None:
    assert transitions.is_not_ready(state) is expected


@pytest.mark.parametrize("as_model", [False, True], ids=["dict", "model"])
def test_pod_ref(as_model: bool) -> None:
    raw = pod("ns", "p", "n1", {"app": "noobaa"}, uid="u1")
    ref = transitions.pod_ref(to_model(raw, "V1Pod") if as_model else raw)
    assert ref == transitions.PodRef("ns", "p", "u1", "n1")
    assert ref.labels == {"app": "noobaa"}


def _refs(*raws: dict[str, object]) -> list[transitions.PodRef]:
    return [transitions.pod_ref(r) for r in raws]


def test_pods_to_delete_filters_node_namespace_and_labels() -> None:
    pods = _refs(
        pod("b", "core-0", "n1"),
        pod("a", "db-0", "n1"),
        pod("a", "web", "n1", {"app": "web"}),
        pod("a", "other-node", "n2"),
        pod("c", "wrong-ns", "n1"),
        pod("a", "unlabelled", "n1", {}),
    )
    sel = selectors.parse_selector("app=noobaa")
    chosen = transitions.pods_to_delete(pods, node="n1", selector=sel,
                                        namespaces=frozenset({"a", "b"}))
    assert [(p.namespace, p.name) for p in chosen] == [("a", "db-0"), ("b", "core-0")]


def test_pods_to_delete_all_namespaces_and_no_selector() -> None:
    pods = _refs(pod("a", "web", "n1", {"app": "web"}), pod("c", "x", "n1"),
                 pod("a", "y", "n2"))
    chosen = transitions.pods_to_delete(pods, node="n1", selector=None, namespaces=None)
    assert [p.name for p in chosen] == ["web", "x"]


def test_pods_to_delete_dedups() -> None:
    pods = _refs(pod("a", "p", "n1"), pod("a", "p", "n1"))
    assert len(transitions.pods_to_delete(pods, node="n1", selector=None, namespaces=None)) == 1


@pytest.mark.parametrize(("taints", "fenced"), [
    ((), False),
    (("node.kubernetes.io/unreachable:NoSchedule",), True),
    (("node.kubernetes.io/not-ready:NoExecute",), True),
    (("node.kubernetes.io/unreachable:PreferNoSchedule",), False),
    (("node.kubernetes.io/unschedulable:NoSchedule",), False),
])
@pytest.mark.parametrize("as_model", [False, True], ids=["dict", "model"])
def test_is_fenced(taints: tuple[str, ...], fenced: bool, as_model: bool) -> None:
    raw = node("n", "Unknown", taints=taints)
    assert transitions.is_fenced(to_model(raw, "V1Node") if as_model else raw) is fenced
