"""examples/outside-controller stays an outsider, and its event logic does what its README says.

The program is the suite's proof that it certifies a controller it has never seen: it must
not lean on zoneproof (no import of it, no copy of the reference). Its conformance runs are
``scripts/conformance-loop.sh N --zp-controller-command ...`` (README there); here only the
cheap parts: what it imports and its pure node-event decisions (no API server is called).
"""

from __future__ import annotations

import ast
import importlib.util
import queue
import sys
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from kubernetes import client

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = ROOT / "examples" / "outside-controller" / "outside_controller.py"
REFERENCE = ROOT / "zoneproof" / "components" / "reference" / "ha_controller"


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def test_it_imports_no_zoneproof_module_and_nothing_relative() -> None:
    imported = _imported(PROGRAM)
    assert imported, "no import found: is the path right?"
    ours = sorted(n for n in imported if n.split(".")[0] in ("zoneproof", "zoneproof_fixtures")
                  or n.startswith("."))
    assert not ours, f"{PROGRAM.name} imports {ours}: an outside controller must stand alone"
    assert "kubernetes.leaderelection" in imported, "it uses the client's own leader election"


def test_it_shares_no_line_of_logic_with_the_reference() -> None:
    ours = {line.strip() for line in PROGRAM.read_text().splitlines() if len(line.strip()) > 40}
    shared = sorted(ours & {line.strip() for path in REFERENCE.rglob("*.py")
                            for line in path.read_text().splitlines()})
    assert not shared, f"lines copied from the reference: {shared}"


@pytest.fixture(scope="module")
def program() -> ModuleType:
    spec = importlib.util.spec_from_file_location("outside_controller", PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["outside_controller"] = module
    spec.loader.exec_module(module)
    return module


def _node(ready: str | None, *taints: tuple[str, str]) -> client.V1Node:
    conditions = [] if ready is None else [client.V1NodeCondition(type="Ready", status=ready)]
    return client.V1Node(
        metadata=client.V1ObjectMeta(name="n"),
        spec=client.V1NodeSpec(taints=[client.V1Taint(key=k, effect=e) for k, e in taints]),
        status=client.V1NodeStatus(conditions=conditions))


def test_node_state_reads_ready_and_only_the_no_schedule_fence(program: Any) -> None:
    state = program.node_state
    assert state(_node("True")) == program.NodeState("True", False)
    assert state(_node(None)).ready == "Unknown"
    assert state(_node("False", ("node.kubernetes.io/not-ready", "NoSchedule"))).fenced
    assert state(_node("Unknown", ("node.kubernetes.io/unreachable", "NoSchedule"))).fenced
    assert not state(_node("Unknown", ("node.kubernetes.io/unreachable", "NoExecute"))).fenced
    assert not state(_node("False", ("example.com/other", "NoSchedule"))).fenced


def _controller(program: Any, *, leading: bool = True, renewed_ago: float | None = 0.0) -> Any:
    lock = SimpleNamespace(last_write_sent=None if renewed_ago is None
                           else time.monotonic() - renewed_ago)
    controller = program.Controller(core=None, lock=lock, namespaces=["a", "b"],
                                    selector="app=noobaa", renew_deadline=4.0)
    if leading:
        controller.leading.set()
    return controller


def _drain(q: queue.Queue[tuple[str, str]]) -> list[str]:
    out = []
    while not q.empty():
        out.append(q.get_nowait()[1])
    return out


def test_it_acts_on_ready_true_to_false_and_to_unknown_only(program: Any) -> None:
    s = program.NodeState
    controller = _controller(program)
    controller.on_change("n", s("True", False), s("False", False))
    controller.on_change("n", s("True", False), s("Unknown", False))
    controller.on_change("n", s("False", False), s("Unknown", False))  # not a Ready -> NotReady
    controller.on_change("n", s("Unknown", False), s("True", False))   # recovery
    assert _drain(controller.queue) == ["Ready True -> False", "Ready True -> Unknown"]


def test_a_standby_queues_nothing(program: Any) -> None:
    s = program.NodeState
    controller = _controller(program, leading=False)
    controller.on_change("n", s("True", False), s("False", False))
    assert _drain(controller.queue) == []


def test_the_fence_follow_up_comes_once_and_only_after_acting_unfenced(program: Any) -> None:
    s = program.NodeState
    controller = _controller(program)
    controller.on_change("n", s("Unknown", False), s("Unknown", True))  # never acted: nothing
    controller.awaiting_fence.add("n")
    controller.on_change("n", s("Unknown", False), s("Unknown", True))
    controller.on_change("n", s("Unknown", False), s("Unknown", True))  # once only
    assert _drain(controller.queue) == ["fenced after we acted"]
    controller.awaiting_fence.add("n")
    controller.on_change("n", s("Unknown", True), s("True", True))  # Ready again: forgotten
    assert "n" not in controller.awaiting_fence


def test_it_holds_the_lease_only_within_the_renew_deadline_of_its_last_write(program: Any) -> None:
    assert _controller(program, renewed_ago=1.0).holds_lease()
    assert not _controller(program, renewed_ago=4.5).holds_lease()
    assert not _controller(program, renewed_ago=None).holds_lease()
    assert not _controller(program, leading=False).holds_lease()
