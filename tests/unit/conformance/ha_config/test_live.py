"""The pure parts of the live conformance harness and of the live mutant runner."""

from __future__ import annotations

from typing import Any

import pytest

from zoneproof import errors
from zoneproof.conformance.ha_config import cases, live
from zoneproof.specs.ha_config.configuration import TolerationDefaults

ALL = {c.id: c for c in cases.load_cases()}


def test_shared_and_private_cases() -> None:
    private = {c.id: live.needs_private_bed(c) for c in ALL.values() if live.needs_private_bed(c)}
    assert "Node(s)" in private["single-node-ftt-node"]
    assert "changes the Node count" in private["companion-multi-to-single-node"]
    assert "configuration" in private["e15-tolerations"]
    assert private["companion-acts-at-start"] == "the webhook must see 1 Node(s)"
    assert "configuration" in private["review-tolerations-added-strictly"]
    assert live.needs_private_bed(ALL["e01-seed-controller-three-zones"]) is None
    assert live.needs_private_bed(ALL["review-namespace-without-consider"]) is None
    assert live.needs_private_bed(ALL["hpa-deleted-scales-down"]) is None


def test_each_runner_refuses_the_other_kind_of_case() -> None:
    with pytest.raises(errors.ConfigError, match="use run_review_case"):
        live.run_case(None, ALL["review-namespace-without-consider"])  # type: ignore[arg-type]
    with pytest.raises(errors.ConfigError, match="use run_case"):
        live.run_review_case(None, ALL["e01-seed-controller-three-zones"],  # type: ignore[arg-type]
                             lambda body: (200, b""))


def test_settings_args_are_only_the_configured_flags() -> None:
    assert live.settings_args(TolerationDefaults()) == ()
    assert live.settings_args(TolerationDefaults(30, None)) == ("--not-ready-toleration-seconds", "30")
    assert live.settings_args(TolerationDefaults(60, 120)) == (
        "--not-ready-toleration-seconds", "60", "--unreachable-toleration-seconds", "120")


def test_namespace_name_is_suffixed_and_short() -> None:
    case = ALL["e16b-user-tsc-single-replica-statefulset"]
    name = live.namespace_name(case, "abc123")
    assert name.endswith("-abc123") and name.startswith("hac-e16b") and len(name) <= 63


def test_baseline_takes_webhook_fields_from_the_submission() -> None:
    submitted: Any = {"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 1, "template": {"spec": {}}}}
    stored: Any = {"metadata": {"labels": {"a": "b"}, "uid": "u"},
                   "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate"}, "template": {"spec": {
                       "tolerations": [{"key": "k"}], "restartPolicy": "Always"}}}}
    assert live.baseline("Deployment", submitted, stored) == {
        "metadata": {"labels": {"a": "b"}, "uid": "u"},
        "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate"},
                 "template": {"spec": {"restartPolicy": "Always"}}}}
    assert live.baseline("Deployment", {}, {"spec": {"replicas": 1}})["spec"] == {"replicas": 1}
    assert live.baseline("HorizontalPodAutoscaler", {}, {"spec": {"minReplicas": 1}})["spec"] == \
        {"minReplicas": 1}
