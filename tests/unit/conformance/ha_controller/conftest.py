"""Hand-made histories for the controller model: each step an audited request, revisions
and API server times as the record would hold them."""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import replace

import pytest

from zoneproof.conformance.ha_controller.history import History, NodeView, PodView, Step
from zoneproof.conformance.ha_controller.model import Setup
from zoneproof.measure.audit import ApiOrder

T0 = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)
SETUP = Setup(namespaces=("w1", "w2"), selector="app=noobaa", replicas=("r0", "r1"))
MATCH = {"app": "noobaa"}


class Builder:
    """Appends steps 10 ms apart (``at`` jumps to a second), each a fresh revision."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.revision = itertools.count(100)
        self.uids = itertools.count(1)
        self.now = 0.0
        self.nodes: dict[str, NodeView] = {}
        self.pods: dict[tuple[str, str], PodView] = {}

    def at(self, seconds: float) -> Builder:
        self.now = seconds
        return self

    def _order(self, *, write: bool = True, took: float = 0.004) -> ApiOrder:
        self.now += 0.01
        start = T0 + dt.timedelta(seconds=self.now)
        return ApiOrder(start, start + dt.timedelta(seconds=took),
                        next(self.revision) if write else None)

    def node(self, name: str, ready: str = "True", *, fenced: bool = False,
             unschedulable: bool = False, zone: str = "a") -> Builder:
        view = NodeView(name, ready, fenced, unschedulable, zone=zone)
        self.nodes[name] = view
        self.steps.append(Step(self._order(), "exec", "node", node=view))
        return self

    def gone(self, name: str) -> Builder:
        """Node ``name`` deleted (its pods stay bound to its name)."""
        view = NodeView(name, exists=False)
        self.nodes[name] = view
        self.steps.append(Step(self._order(), "exec", "node", node=view))
        return self

    def unchanged(self, name: str) -> Builder:
        """A patch of node ``name`` that changes nothing (a taint removed again): the API
        server answers with the node's unchanged resourceVersion, an old revision."""
        written = next(s for s in reversed(self.steps) if s.kind == "node"
                       and s.node is not None and s.node.name == name)
        order = self._order(write=False)
        self.steps.append(replace(written, order=replace(order, revision=written.order.revision)))
        return self

    def pod(self, name: str, node: str, *, namespace: str = "w1",
            labels: dict[str, str] | None = None, phase: str = "Running",
            terminating: bool = False) -> Builder:
        view = PodView(namespace, name, f"uid-{next(self.uids)}", node,
                       tuple(sorted((MATCH if labels is None else labels).items())), phase,
                       terminating)
        self.pods[(namespace, name)] = view
        self.steps.append(Step(self._order(), "exec", "pod", pod=view))
        return self

    def delete(self, who: str, name: str, *, namespace: str = "w1", grace: int | None = 0,
               code: int = 200, grace_known: bool = True) -> Builder:
        pod = self.pods.get((namespace, name))
        removed = None
        if pod is not None and 200 <= code < 300:
            removed = PodView(pod.namespace, pod.name, pod.uid, pod.node, pod.labels,
                              pod.phase, grace != 0, exists=grace != 0)
            if grace == 0:
                del self.pods[(namespace, name)]
            else:
                self.pods[(namespace, name)] = removed
        self.steps.append(Step(self._order(write=200 <= code < 300), who, "delete", code,
                               pod=removed, target=f"{namespace}/{name}", grace=grace,
                               grace_known=grace_known))
        return self

    def lease(self, who: str, holder: str | None = None, *, duration: float = 6.0) -> Builder:
        self.steps.append(Step(self._order(), who, "lease",
                               holder=who if holder is None else holder, duration_s=duration,
                               renewed_at=T0 + dt.timedelta(seconds=self.now)))
        return self

    def renewals(self, who: str, until: float, every: float = 1.0) -> Builder:
        """``who`` renews the Lease every ``every`` seconds until ``until``."""
        while self.now + every <= until:
            self.at(self.now + every).lease(who)
        return self

    def tries(self, who: str, until: float, every: float = 2.0) -> Builder:
        """``who`` tries for the Lease (a read) every ``every`` seconds until ``until``."""
        while self.now + every <= until:
            self.at(self.now + every).attempt(who)
        return self

    def attempt(self, who: str) -> Builder:
        self.steps.append(Step(self._order(write=False), who, "attempt"))
        return self

    def mark(self, text: str) -> Builder:
        self.steps.append(Step(self._order(), "exec", "marker", marker=text))
        return self

    def history(self) -> History:
        return History(tuple(self.steps))

    def recorded(self) -> History:
        """The history as the audit log gives it: steps put in the API server's order."""
        return History.from_dict(self.history().to_dict())


@pytest.fixture
def build() -> Builder:
    """A fresh history builder."""
    return Builder()


@pytest.fixture
def setup() -> Setup:
    """Watched w1 and w2, selector app=noobaa, replicas r0 and r1, 6/4/1 s Lease, 10 s."""
    return SETUP
