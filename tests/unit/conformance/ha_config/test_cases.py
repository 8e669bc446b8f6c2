"""Conformance cases in-process: the loader, the reference passing all, every variant caught.

A variant is caught by a case (through the modelled API server or posted to the handler) or by
a registration check on the configuration it is registered with. ``CAUGHT_BY`` pins which
checks catch each variant added for the blind spots of issue 15: none of the checks that
existed before catches them.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_config import variants
from zoneproof.conformance.ha_config import cases, expectations, reference, registration_checks
from zoneproof.specs.ha_config import registration

ALL = cases.load_cases()


def catching(variant: variants.Variant) -> set[str]:
    """Every case id and ``registration:<check>`` that fails ``variant``."""
    rendered = registration.render_webhook_configuration(
        ca_bundle=b"in-process", url="https://in-process", selection=variants.selection(variant))
    return ({c.id for c in ALL if not reference.run_case(c, variant).passed}
            | {f"registration:{name}" for name in registration_checks.judge(rendered)})


#: Issue 15's blind spots: each new variant, and exactly what catches it.
CAUGHT_BY: dict[str, set[str]] = {
    "controller-reduced-any-ftt": {"controller-ftt-node-deployment", "controller-ftt-zone-statefulset",
                                   "controller-ftt-node-hpa"},
    "statefulset-scales-down-hpa": {"statefulset-hpa-keeps-replicas"},
    "statefulset-controller-gets-two": {"statefulset-controller-empty-ftt"},
    "statefulset-ignores-replicas-annotation": {"statefulset-replicas-annotation"},
    "statefulset-scales-hibernated": {"statefulset-hibernated"},
    "statefulset-drops-user-tscs": {"statefulset-merge-existing"},
    "match-label-keys-on-kept-tscs": {"statefulset-merge-existing"},
    "unreachable-uses-not-ready-seconds": {"tolerations-differing-seconds"},
    "host-spread-from-namespace": {"host-spread-namespace-annotation-ignored"},
    "host-spread-from-template": {"host-spread-template-annotation-ignored"},
    "ftt-from-namespace-label": {"ftt-namespace-label-ignored"},
    "zones-from-namespace-label": {"zones-namespace-label-ignored"},
    "pins-empty-zones": {"empty-zones-annotation"},
    "skips-affinity-with-preferred": {"affinity-only-preferred"},
    "keeps-changed-replicas": {"update-changes-replicas"},
    "namespace-selector-deployments-only": {"statefulset-namespace-without-consider",
                                            "hpa-namespace-without-consider",
                                            "registration:namespaceSelector"},
    "failure-policy-ignore": {"registration:failurePolicy"},
    "match-policy-exact": {"registration:matchPolicy"},
    "side-effects-none-on-dry-run": {"registration:sideEffects"},
    "timeout-30s": {"registration:timeoutSeconds"},
    "review-versions-v1-only": {"registration:admissionReviewVersions"},
    "reinvocation-if-needed": {"registration:reinvocationPolicy"},
    "registers-scale-subresource": {"registration:rules"},
    "unicode-digit-replicas": {"replicas-annotation-unicode-digits"},
    "bad-replicas-400": {"bad-replicas-annotation-forbidden", "review-bad-replicas-annotation",
                         "replicas-annotation-unicode-digits"},
    "companion-not-at-start": {"companion-acts-at-start"},
    "handler-checks-namespace-label": {"review-namespace-without-consider"},
    "hpa-cache-ignores-deletes": {"hpa-deleted-scales-down"},
    "hpa-any-apps-version": {"hpa-target-v1beta1-not-recognised"},
    "hpa-max-from-min": {"hpa-max-below-min-refused"},
    "caps-raise-at-hpa-max": {"hpa-scaled-raise-not-capped"},
    "min-domains-hpa-max-above-replicas": {"hpa-scaled-above-max-min-domains"},
    "raw-zone-count": {"zones-duplicate-entries"},
    "replace-absent-tolerations": {"review-tolerations-added-strictly"},
    "type-case-insensitive": {"type-label-capitalised-controller"},
    "trims-zones": {"zones-untrimmed-refused", "zones-untrimmed"},
    "answers-v1beta1-always": {c.id for c in ALL if c.direct},
}


@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_reference_passes(case: cases.Case) -> None:
    result = reference.run_case(case)
    assert result.passed, "\n".join(result.failures)


@pytest.mark.parametrize("name", [n for n in variants.VARIANTS if n != "reference"])
def test_every_variant_fails_at_least_one_check(name: str) -> None:
    assert catching(variants.get_variant(name)), f"no case and no registration check catches {name}"


@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_each_blind_spot_variant_is_caught_by_its_new_checks_only(name: str) -> None:
    assert catching(variants.get_variant(name)) == CAUGHT_BY[name]


def test_the_reference_registration_passes_every_check() -> None:
    rendered = registration.render_webhook_configuration(ca_bundle=b"ca", url="https://x")
    assert registration_checks.judge(rendered) == {}


def test_every_spec_example_has_a_case() -> None:
    spec_refs = " ".join(case.spec for case in ALL)
    assert set(re.findall(r"§14 E(\d+)", spec_refs)) >= {str(n) for n in range(1, 18)}


def test_case_ids_are_unique_and_cover_all_kinds() -> None:
    assert len({c.id for c in ALL}) == len(ALL) >= 90
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
    assert reference.run_case(case).passed


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
        via: somewhere
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
                     "denied excludes every other expectation", "via: must be"]:
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
    failures = expectations.check_expectation(expect, kind="Deployment", submitted={}, stored=stored,
                                            denial=None)
    assert failures == ["spec.replicas: expected 2, observed 3",
                        "Deployment tolerations: expected [], observed [{'key': 'k'}]"]
    assert expectations.check_expectation(cases.Expectation(denied="bad"), kind="Deployment", submitted={},
                                        stored=None, denial="a bad value") == []
    assert expectations.check_expectation(cases.Expectation(untouched=True), kind="Deployment", submitted={},
                                        stored=None, denial="no") == [
        "expected the request to be allowed, but it was refused: 'no'"]


def test_merge_patch_is_rfc_7386() -> None:
    assert expectations.merge_patch({"a": "b", "c": {"d": "e", "f": "g"}},
                                  {"a": "z", "c": {"f": None}}) == {"a": "z", "c": {"d": "e"}}
    assert expectations.merge_patch({"a": [1]}, {"a": [2]}) == {"a": [2]}


def test_fewest_nodes_counts_the_cluster_and_every_nodes_step() -> None:
    by_id = {c.id: c for c in ALL}
    shrinking = by_id["companion-multi-to-single-node"]
    assert shrinking.cluster.nodes > 1
    assert shrinking.fewest_nodes == 1
    assert all(c.fewest_nodes == c.cluster.nodes for c in ALL if not any(
        s.nodes is not None for s in c.steps))


def test_check_expectation_judges_the_refusal_code() -> None:
    expect = cases.Expectation(denied="bad", code=403)
    assert expectations.check_expectation(expect, kind="Deployment", submitted={}, stored=None,
                                          denial="a bad value", code=403) == []
    assert expectations.check_expectation(expect, kind="Deployment", submitted={}, stored=None,
                                          denial="a bad value", code=400) == [
        "refused with HTTP status 400, expected 403 (Forbidden)"]


def test_loader_reads_review_cases_and_new_step_kinds(tmp_path: Path) -> None:
    text = GOOD.replace("    steps:\n", "    via: review\n    steps:\n")
    assert cases.load_case(write(tmp_path, "good", text)).direct
    bad = GOOD.replace("id: good", "id: steps").replace("""    - operation: CREATE
      expect: {replicas: 1}
""", """    - operation: CREATE
      expect: {denied: x, code: "403"}
    - restart: true
      expect: {replicas: 1}
    - delete_hpa: nope
      expect: {replicas: 1}
""")
    with pytest.raises(errors.ConfigError) as caught:
        cases.load_case(write(tmp_path, "steps", bad))
    message = str(caught.value)
    for fragment in ["steps[0].expect.code: is the HTTP status", "steps[1].restart: must be",
                     "steps[2].delete_hpa: 'nope' is not one of the case's hpas"]:
        assert fragment in message, fragment
    review = GOOD.replace("id: good", "id: review").replace("    steps:\n", """    via: review
    steps:
""").replace("""      expect: {replicas: 1}
""", """      expect: {replicas: 1}
    - nodes: 2
      expect: {replicas: 1}
""")
    with pytest.raises(errors.ConfigError, match="a review case posts CREATE/UPDATE reviews only"):
        cases.load_case(write(tmp_path, "review", review))


def test_review_cases_run_in_every_admission_review_version() -> None:
    case = next(c for c in ALL if c.id == "review-namespace-without-consider")
    result = reference.run_case(case)
    assert result.passed
    assert [s.label for s in result.steps] == ["review v1", "review v1beta1"]
    broken = reference.run_case(case, variants.get_variant("answers-v1beta1-always"))
    assert broken.failures == [
        "steps[0] review v1: a admission.k8s.io/v1 review was answered as apiVersion "
        "'admission.k8s.io/v1beta1' kind 'AdmissionReview': answer in the version asked (spec §15)"]
