"""Conformance cases in-process: the loader, the reference passing all, every variant caught."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_config import variants
from zoneproof.conformance.ha_config import cases, simulation

ALL = cases.load_cases()


@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_reference_passes(case: cases.Case) -> None:
    result = simulation.run_case(case)
    assert result.passed, "\n".join(result.failures)


@pytest.mark.parametrize("name", [n for n in variants.VARIANTS if n != "reference"])
def test_every_variant_fails_at_least_one_case(name: str) -> None:
    variant = variants.get_variant(name)
    assert any(not simulation.run_case(case, variant).passed for case in ALL), f"no case catches {name}"


def test_every_spec_example_has_a_case() -> None:
    spec_refs = " ".join(case.spec for case in ALL)
    assert set(re.findall(r"§14 E(\d+)", spec_refs)) >= {str(n) for n in range(1, 18)}


def test_case_ids_are_unique_and_cover_all_kinds() -> None:
    assert len({c.id for c in ALL}) == len(ALL) >= 40
    assert {c.kind for c in ALL} == {"Deployment", "StatefulSet", "HorizontalPodAutoscaler"}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


GOOD = """\
    id: good
    description: d
    spec: "§5"
    namespace: {labels: {high-availability-config.resources.gardener.cloud/consider: "true"}}
    cluster: {nodes: 2}
    object:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: app}
      spec: {replicas: 1}
    steps:
    - operation: CREATE
      expect: {replicas: 1}
    """


def test_loader_builds_typed_cases(tmp_path: Path) -> None:
    case = cases.load_case(write(tmp_path, "good", GOOD))
    assert case.cluster == cases.ClusterShape(2)
    assert case.namespace.name == "hac-good"
    assert case.steps[0].expect.replicas == 1
    assert case.steps[0].expect.affinity is cases.UNSET
    assert simulation.run_case(case).passed


def test_loader_lists_every_problem(tmp_path: Path) -> None:
    bad = """\
        id: other
        spec: ""
        namespace: {labels: {consider: true}}
        cluster: {nodes: -1}
        hpas: [{name: h}]
        webhook: {notReadyTolerationSeconds: 60, bogus: 1}
        object: {apiVersion: apps/v2, kind: Deployment, metadata: {name: a, namespace: x}}
        steps:
        - operation: UPDATE
          expect: {replica: 2}
        - nodes: 2
          operation: CREATE
          expect: {denied: x, replicas: 1}
        extra: 1
        """
    with pytest.raises(errors.ConfigError) as caught:
        cases.load_case(write(tmp_path, "bad", bad))
    message = str(caught.value)
    for fragment in ["unknown key 'extra'", "description: must be a non-empty string",
                     "id: must equal the file name", "namespace.labels: must map strings to strings",
                     "cluster.nodes: must be an integer >= 0", "hpas[0]", "webhook: only",
                     "object.apiVersion: Deployment needs apiVersion apps/v1", "object.metadata",
                     "steps[0]: the first step must be operation: CREATE", "unknown key 'replica'",
                     "steps[0].expect: checks nothing", "steps[1]: needs exactly one of",
                     "denied excludes every other expectation"]:
        assert fragment in message, fragment


def test_load_cases_reports_all_files_and_empty_dirs(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="no conformance cases"):
        cases.load_cases(tmp_path)
    write(tmp_path, "a", "[]")
    write(tmp_path, "b", "id: [")
    with pytest.raises(errors.ConfigError) as caught:
        cases.load_cases(tmp_path)
    assert "a.yaml: (top): must be a mapping" in str(caught.value)
    assert "b.yaml: cannot read the case" in str(caught.value)


def test_check_expectation_reports_expected_and_observed() -> None:
    expect = cases.Expectation(replicas=2, tolerations=(), affinity=None)
    stored: Any = {"spec": {"replicas": 3,
                            "template": {"spec": {"tolerations": [{"key": "k"}], "affinity": {}}}}}
    failures = simulation.check_expectation(expect, kind="Deployment", submitted={}, stored=stored,
                                            denial=None)
    assert failures == ["spec.replicas: expected 2, observed 3",
                        "Deployment tolerations: expected [], observed [{'key': 'k'}]"]
    assert simulation.check_expectation(cases.Expectation(denied="bad"), kind="Deployment", submitted={},
                                        stored=None, denial="a bad value") == []
    assert simulation.check_expectation(cases.Expectation(untouched=True), kind="Deployment", submitted={},
                                        stored=None, denial="no") == [
        "expected the request to be allowed, but it was refused: 'no'"]


def test_merge_patch_is_rfc_7386() -> None:
    assert simulation.merge_patch({"a": "b", "c": {"d": "e", "f": "g"}},
                                  {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert simulation.merge_patch({"a": [1]}, {"a": [2]}) == {"a": [2]}


def test_fewest_nodes_counts_the_cluster_and_every_nodes_step() -> None:
    by_id = {c.id: c for c in ALL}
    shrinking = by_id["companion-multi-to-single-node"]
    assert shrinking.cluster.nodes > 1
    assert shrinking.fewest_nodes == 1
    assert all(c.fewest_nodes == c.cluster.nodes for c in ALL if not any(
        s.nodes is not None for s in c.steps))
