"""PodCache: list replaces a scope, watch events update the node index, sync per scope."""

from __future__ import annotations

from zoneproof.components.reference.ha_controller.podcache import PodCache
from zoneproof.components.reference.ha_controller.testing import pod, to_model
from zoneproof.components.reference.ha_controller.transitions import pod_ref


def names(cache: PodCache, node: str) -> list[str]:
    return [f"{p.namespace}/{p.name}" for p in cache.on_node(node)]


def test_synced_once_every_scope_is_listed() -> None:
    cache = PodCache(["a", "b"])
    cache.replace("a", [pod("a", "p", "n1")])
    assert not cache.synced.is_set()
    cache.replace("b", [])
    assert cache.synced.is_set()


def test_index_by_node_sorted() -> None:
    cache = PodCache([None])
    cache.replace(None, [pod("b", "x", "n1"), pod("a", "y", "n1"), pod("a", "z", "n2")])
    assert names(cache, "n1") == ["a/y", "b/x"]
    assert names(cache, "n2") == ["a/z"]
    assert names(cache, "n3") == []


def test_events_move_add_and_remove_pods() -> None:
    cache = PodCache([None])
    cache.replace(None, [pod("a", "p", "n1")])
    cache.apply("MODIFIED", pod("a", "p", "n2"))  # e.g. bound after being listed unbound
    assert names(cache, "n1") == [] and names(cache, "n2") == ["a/p"]
    cache.apply("ADDED", to_model(pod("a", "q", "n2"), "V1Pod"))  # models work too
    assert names(cache, "n2") == ["a/p", "a/q"]
    cache.apply("DELETED", pod("a", "p", "n2"))
    assert names(cache, "n2") == ["a/q"] and len(cache) == 1


def test_recreated_pod_carries_its_new_uid() -> None:
    cache = PodCache([None])
    cache.replace(None, [pod("a", "db-0", "n1", uid="old")])
    cache.apply("DELETED", pod("a", "db-0", "n1", uid="old"))
    cache.apply("ADDED", pod("a", "db-0", "n2", uid="new"))
    (ref,) = cache.on_node("n2")
    assert ref.uid == "new" and cache.on_node("n1") == []


def test_unbound_pods_are_kept_but_on_no_node() -> None:
    cache = PodCache([None])
    unbound = pod("a", "pending", "n1")
    unbound["spec"].pop("nodeName")
    cache.replace(None, [unbound])
    assert len(cache) == 1 and names(cache, "n1") == []


def test_a_relist_replaces_only_its_own_scope() -> None:
    cache = PodCache(["a", "b"])
    cache.replace("a", [pod("a", "p", "n1"), pod("a", "gone", "n1")])
    cache.replace("b", [pod("b", "q", "n1")])
    cache.replace("a", [pod("a", "p", "n1")])  # after a 410: "a/gone" was deleted meanwhile
    assert names(cache, "n1") == ["a/p", "b/q"]


def test_discard_forgets_a_deleted_pod_until_its_deleted_event() -> None:
    cache = PodCache([None])
    cache.replace(None, [pod("a", "p", "n1", uid="u1"), pod("a", "q", "n1", uid="u2")])
    (p, _) = cache.on_node("n1")
    cache.discard(p)
    assert names(cache, "n1") == ["a/q"]
    cache.apply("MODIFIED", pod("a", "p", "n1", uid="u1"))  # late (e.g. kcm's status update)
    assert names(cache, "n1") == ["a/q"], "a late event must not bring it back"
    cache.apply("DELETED", pod("a", "p", "n1", uid="u1"))
    cache.apply("ADDED", pod("a", "p", "n2", uid="u3"))  # recreated: a new uid is welcome
    assert names(cache, "n2") == ["a/p"]


def test_discard_leaves_a_recreated_pod_alone() -> None:
    cache = PodCache([None])
    cache.replace(None, [pod("a", "db-0", "n1", uid="old")])
    cache.apply("DELETED", pod("a", "db-0", "n1", uid="old"))
    cache.apply("ADDED", pod("a", "db-0", "n2", uid="new"))
    cache.discard(pod_ref(pod("a", "db-0", "n1", uid="old")))  # a late answer for the old one
    assert names(cache, "n2") == ["a/db-0"]


def test_a_relist_trusts_the_list_but_not_for_pods_deleted_here() -> None:
    cache = PodCache(["a", "b"])
    cache.replace("a", [pod("a", "p", "n1", uid="u1")])
    cache.replace("b", [pod("b", "q", "n1", uid="u2")])
    for ref in cache.on_node("n1"):
        cache.discard(ref)
    cache.replace("a", [pod("a", "p", "n1", uid="u1")])  # a list a beat older than the delete
    assert names(cache, "n1") == []
    cache.replace("a", [])  # u1 confirmed gone: forgotten; b's u2 still remembered
    cache.apply("MODIFIED", pod("b", "q", "n1", uid="u2"))
    assert names(cache, "n1") == []
