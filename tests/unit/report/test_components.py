"""summary.json's components: what the harness started, folded per distinct component."""

from __future__ import annotations

import json
import sys

from zoneproof.components.harness import started
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.command import Command
from zoneproof.components.harness.sources.registered import Registered
from zoneproof.report import components

VENDOR = Component(Kind.CONTROLLER, Command("{python} ctl {kubeconfig} {identity}"))


def _property(component: Component, *argv: str) -> str:
    name, value = components.property_of(started.of_command(component, [sys.executable, *argv]))
    assert name == components.PROPERTY
    return value


def test_starts_fold_per_component_with_their_tests() -> None:
    broken = Component(Kind.CONTROLLER, Registered(variant="graceful-delete"))
    section = components.section([
        ("t1", _property(VENDOR, "ctl", "k", "zp-0")), ("t1", _property(VENDOR, "ctl", "k", "zp-1")),
        ("t2", _property(VENDOR, "ctl", "k", "zp-0")), ("t3", _property(broken, "-m", "x"))])
    vendor, twin = section["controller"]["ran"]
    assert section["controller"]["starts"] == 4
    assert vendor["component"] == VENDOR.to_dict() and vendor["command"] == VENDOR.template
    assert (vendor["starts"], vendor["tests"], vendor["argv"][-1]) == (3, ["t1", "t2"], "zp-0")
    assert twin["component"]["variant"] == "graceful-delete" and twin["tests"] == ["t3"]
    assert section["webhook"] == {"starts": 0, "ran": [],
                                  "note": "no webhook was started in this run"}
    json.dumps(section)
