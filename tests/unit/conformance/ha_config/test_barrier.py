"""The barrier (which probes tell facts apart, when a change counts as reflected) and the
generated runs' pure parts, against the model answering as a webhook."""

from __future__ import annotations

import dataclasses
import json

import pytest

from zoneproof.conformance.ha_config import barrier, differential, direct, generated, model
from zoneproof.specs.ha_config import facts, keys

NS = "team"
BASE = model.Facts(facts.NamespaceInfo(NS, {keys.LABEL_CONSIDER: "true"}), (), 3)


def annotated(**annotations: str) -> model.Facts:
    assert BASE.namespace is not None
    return dataclasses.replace(BASE, namespace=dataclasses.replace(BASE.namespace, annotations={
        getattr(keys, name): value for name, value in annotations.items()}))


def poster(current: list[model.Facts]) -> barrier.Post:
    """Probes answered by the model as a webhook seeing ``current[0]``."""
    def post(namespace: str, probe: dict[str, object]) -> object:
        request = barrier.probe_request(probe, namespace)  # type: ignore[arg-type]
        example = differential.Example(request, current[0])
        status, body = differential.model_answer(example.body(), current[0])
        answer = direct.judge_answer(example.api_version, example.uid, request.obj, status, body)  # type: ignore[arg-type]
        return None if answer.stored is None else barrier.answer_of(answer.stored)

    return post  # type: ignore[return-value]


@pytest.mark.parametrize("new", [
    annotated(ANNOTATION_FAILURE_TOLERANCE_TYPE=""),
    annotated(ANNOTATION_FAILURE_TOLERANCE_TYPE="node"),
    annotated(ANNOTATION_ZONES="z1,z2"),
    annotated(ANNOTATION_ZONE_PINNING="true", ANNOTATION_ZONES="z1"),
    dataclasses.replace(BASE, nodes=1),
])
def test_a_change_is_reflected_once_the_webhook_answers_with_the_new_facts(new: model.Facts) -> None:
    seen = [BASE]
    pending = barrier.facts_changed(NS, BASE, new, poster(seen), what="a change")
    assert pending.probes, "some probe tells the facts apart"
    assert barrier.wait([pending], poster(seen), timeout_s=0.3, interval_s=0.1) == [pending]
    seen[0] = new
    assert barrier.wait([pending], poster(seen), timeout_s=1) == []


def test_a_change_no_probe_can_show_needs_no_wait() -> None:
    same = annotated(ANNOTATION_ZONE_PINNING="no")  # "not true", as absent (§2)
    pending = barrier.facts_changed(NS, BASE, same, poster([BASE]), what="nothing")
    assert not pending.probes and pending.reflected(poster([BASE]))


def test_the_sync_hpa_shows_either_way() -> None:
    with_hpa = dataclasses.replace(BASE, hpas=(barrier.SYNC_HPA,))
    assert barrier.wait([barrier.hpas_changed(NS, True)], poster([with_hpa]), timeout_s=1) == []
    assert barrier.wait([barrier.hpas_changed(NS, False)], poster([BASE]), timeout_s=1) == []
    late = barrier.wait([barrier.hpas_changed(NS, True)], poster([BASE]), timeout_s=0.2, interval_s=0.1)
    assert "did not reflect its HPA changes" in late[0].report(0.2)


def test_an_unknown_namespace_is_not_reflected_and_unselected_ones_show_nothing() -> None:
    unknown = dataclasses.replace(BASE, namespace=None)
    assert barrier.wait([barrier.created(NS)], poster([unknown]), timeout_s=0.2, interval_s=0.1)
    assert not barrier.called({}, NS) and barrier.called({keys.LABEL_CONSIDER: "true"}, NS)
    assert barrier.created(NS, shows=False).reflected(poster([unknown]))


def test_api_server_expectations_cover_selection_and_validation() -> None:
    obj = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "app", "namespace": NS, "labels": {keys.LABEL_TYPE: "server"},
                        "annotations": {keys.ANNOTATION_REPLICAS: "-1"}},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                    "template": {"metadata": {"labels": {"app": "x"}}, "spec": {}}}}
    request = model.Request("CREATE", "apps", "v1", "Deployment", NS, "app", obj)
    refused = generated._expected_through_api_server(differential.Example(request, BASE))
    assert [(how, o.code) for how, o in refused] == [("refused", 422)]  # replicas -1: validation
    skipped = dataclasses.replace(request, obj={**obj, "metadata": {**obj["metadata"], "labels": {  # type: ignore[dict-item]
        keys.LABEL_TYPE: "server", keys.LABEL_SKIP: "x"}}})
    [(how, outcome)] = generated._expected_through_api_server(differential.Example(skipped, BASE))
    assert how == "stored" and outcome.obj == skipped.obj  # §3: not selected, stored as sent


def test_stored_hpas_target_nothing_a_run_uses() -> None:
    hpa = {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "app"}}}
    request = model.Request("UPDATE", "autoscaling", "v2", "HorizontalPodAutoscaler", NS, "app", hpa, hpa)
    aside = generated._aside(request)
    for obj in (aside.obj, aside.old):
        assert json.dumps(obj).count(generated.UNTARGETED) == 1


def test_an_hpa_change_needs_no_wait_where_the_api_server_refuses_every_probe() -> None:
    """A zone ' 000' (entries are not trimmed) makes the webhook's correct answer invalid for
    the API server: the sync probe can show no HPA there, so the barrier does not wait for
    it (a false failure of the reference on seed 933965199); a webhook refusal or an answer
    without the sync HPA still waits."""
    invalid = {"refused": 'Deployment.apps "zoneproof-sync" is invalid: spec.template.spec.'
                          'affinity...values[0]: Invalid value: " 000"'}
    pending = barrier.hpas_changed("ns", True)
    assert pending.check(barrier.SYNC_PROBE, invalid)
    assert not pending.check(barrier.SYNC_PROBE, {"refused": "admission webhook denied the request"})
    assert not pending.check(barrier.SYNC_PROBE, {"replicas": 2, "tsc": []})


def through_api_server(current: list[model.Facts]) -> barrier.Post:
    """Probes answered as the API server would, with the model as its webhook (validation)."""
    def post(namespace: str, probe: dict[str, object]) -> object:
        request = barrier.probe_request(probe, namespace)  # type: ignore[arg-type]
        [(how, outcome)] = generated._expected_through_api_server(differential.Example(request, current[0]))
        return barrier.answer_of(outcome.obj) if how == "stored" else {
            "refused": outcome.message or f"{request.kind} is invalid: "}

    return post  # type: ignore[return-value]


def test_a_tolerance_change_shows_where_the_api_server_refuses_every_workload() -> None:
    """Qualify, shared cluster (seed 3875190804): zones " a" with pinning make every workload
    invalid for the API server (§2: not trimmed; §7: pinned whatever the type), so the
    Deployment probes answered the same refusal before and after ftt went "zone " -> "": the
    barrier waited 30 s and failed the reference webhook. A controller HPA's min/max follow
    the ftt and get no zone (§6): the HPA probe shows the change."""
    pinned = {"ANNOTATION_ZONES": " a", "ANNOTATION_ZONE_PINNING": "true"}
    old = annotated(ANNOTATION_FAILURE_TOLERANCE_TYPE="zone ", **pinned)
    new = annotated(ANNOTATION_FAILURE_TOLERANCE_TYPE="", **pinned)
    seen = [old]
    pending = barrier.facts_changed(NS, old, new, through_api_server(seen), what="the ftt")
    assert barrier.HPA_PROBE in pending.probes
    assert barrier.wait([pending], through_api_server(seen), timeout_s=0.3, interval_s=0.1) == [pending]
    seen[0] = new
    assert barrier.wait([pending], through_api_server(seen), timeout_s=1) == []


def test_a_zone_change_needs_no_wait_where_the_api_server_refuses_every_probe_before_and_after() -> None:
    """Pinned to zones " a", then " a,b": every workload probe is refused as invalid before
    and after (§2, §7) and HPAs get no zone (§6): no probe can show the change, and nothing
    judged through the API server depends on it, so it needs no wait (waiting for it failed
    the reference webhook after 30 s)."""
    pinned = {"ANNOTATION_FAILURE_TOLERANCE_TYPE": "zone", "ANNOTATION_ZONE_PINNING": "true"}
    old = annotated(ANNOTATION_ZONES=" a", **pinned)
    seen = [old]
    pending = barrier.facts_changed(NS, old, annotated(ANNOTATION_ZONES=" a,b", **pinned),
                                    through_api_server(seen), what="the zones")
    assert pending.probes == []
    assert barrier.wait([pending], through_api_server(seen), timeout_s=0.3, interval_s=0.1) == []
    valid = barrier.facts_changed(NS, old, annotated(ANNOTATION_ZONES="a", **pinned),
                                  through_api_server(seen), what="the zones")
    assert valid.probes
    assert barrier.wait([valid], through_api_server(seen), timeout_s=0.3, interval_s=0.1) == [valid]
