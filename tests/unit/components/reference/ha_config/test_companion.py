"""The §11 companion: when to reconcile, which objects disagree, and the API calls it makes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from zoneproof.components.reference.ha_config import companion
from zoneproof.specs.ha_config import keys

HOST = keys.TOPOLOGY_HOSTNAME


def test_tracker_acts_first_then_only_on_flips() -> None:
    tracker = companion.MultiNodeTracker()
    assert [tracker.observe(n) for n in (3, 4, 2, 1, 0, 1, 2, 5)] == [
        True, False, False, True, False, False, True, False]


@pytest.mark.parametrize(("policies", "multi", "due"), [
    ([(HOST, "ScheduleAnyway")], True, True),
    ([(HOST, "ScheduleAnyway")], False, False),
    ([(HOST, "DoNotSchedule")], False, True),
    ([(HOST, "DoNotSchedule")], True, False),
    ([], True, False),
    ([("zone", "DoNotSchedule")], False, False),
    ([("rack", "ScheduleAnyway"), (HOST, "DoNotSchedule"), (HOST, "ScheduleAnyway")], False, True),
])
def test_needs_retrigger_reads_the_first_hostname_constraint(policies: list[tuple[str, str]], multi: bool,
                                                            due: bool) -> None:
    assert companion.needs_retrigger(policies, multi) is due


def test_hostname_policies_of_raw_constraints() -> None:
    assert companion.hostname_policies([{"topologyKey": HOST, "whenUnsatisfiable": "X"}, "junk", {}]) == [
        (HOST, "X"), (None, None)]


def _workload(name: str, when: str | None) -> Any:
    tscs = [SimpleNamespace(topology_key=HOST, when_unsatisfiable=when)] if when else None
    return SimpleNamespace(metadata=SimpleNamespace(name=name),
                           spec=SimpleNamespace(template=SimpleNamespace(
                               spec=SimpleNamespace(topology_spread_constraints=tscs))))


class _FakeApi:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def list_namespace(self, **kwargs: Any) -> Any:
        self.calls.append(("list_namespace", kwargs["label_selector"]))
        return SimpleNamespace(items=[SimpleNamespace(metadata=SimpleNamespace(name="team"))])

    def list_namespaced_deployment(self, namespace: str, **kwargs: Any) -> Any:
        self.calls.append(("list_deployments", namespace, kwargs["label_selector"]))
        return SimpleNamespace(items=[_workload("loose", "ScheduleAnyway"), _workload("none", None),
                                      _workload("strict", "DoNotSchedule")])

    def list_namespaced_stateful_set(self, namespace: str, **kwargs: Any) -> Any:
        return SimpleNamespace(items=[_workload("db", "ScheduleAnyway")])

    def patch_namespaced_deployment(self, name: str, namespace: str, body: Any, **kwargs: Any) -> None:
        self.calls.append(("patch", "Deployment", name, body, kwargs["_content_type"]))

    def patch_namespaced_stateful_set(self, name: str, namespace: str, body: Any, **kwargs: Any) -> None:
        self.calls.append(("patch", "StatefulSet", name, body, kwargs["_content_type"]))


def test_reconcile_sends_empty_merge_patches_to_disagreeing_objects() -> None:
    controller = companion.Companion.__new__(companion.Companion)
    fake = _FakeApi()
    controller.__init__(None)  # type: ignore[misc]
    controller._core = fake
    controller._apps = fake
    controller.reconcile(multi_node=True)
    assert fake.calls == [
        ("list_namespace", f"{keys.LABEL_CONSIDER}=true"),
        ("list_deployments", "team", f"!{keys.LABEL_SKIP}"),
        ("patch", "Deployment", "loose", {}, "application/merge-patch+json"),
        ("patch", "StatefulSet", "db", {}, "application/merge-patch+json"),
    ]
    assert controller.patched == 2


def test_observe_queues_only_due_states() -> None:
    controller = companion.Companion(None)
    for count in (1, 1, 2, 3, 1):
        controller.observe_node_count(count)
    queued = [controller._queue.get_nowait() for _ in range(controller._queue.qsize())]
    assert queued == [False, True, False]


def test_tracker_that_skips_start_acts_only_on_flips() -> None:
    tracker = companion.MultiNodeTracker(at_start=False)
    assert [tracker.observe(n) for n in (3, 4, 1, 2)] == [False, False, True, True]


class _RefusingApi(_FakeApi):
    """The API server refuses the first patch (422: the recomputed object is invalid)."""

    def patch_namespaced_deployment(self, name: str, namespace: str, body: Any, **kwargs: Any) -> None:
        super().patch_namespaced_deployment(name, namespace, body, **kwargs)
        raise ApiException(status=422, reason="Unprocessable Entity")


def test_an_object_the_api_server_refuses_does_not_hold_back_the_others() -> None:
    controller = companion.Companion(None)
    fake = _RefusingApi()
    controller._core = fake
    controller._apps = fake
    controller.reconcile(multi_node=True)
    assert ("patch", "StatefulSet", "db", {}, "application/merge-patch+json") in fake.calls
    assert controller.patched == 1
