"""The handler, rule by rule (spec §4–§10), on hand-built requests and static cluster facts."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from zoneproof.components.reference.ha_config import mutation, patches
from zoneproof.components.reference.ha_config.variants import Behaviour
from zoneproof.specs.ha_config import facts, keys

NS = "team"
HAC = keys.PREFIX
CONSIDER = {keys.LABEL_CONSIDER: "true"}


def workload(kind: str = "Deployment", *, replicas: int | None = 1, type_: str | None = "server",
             annotations: dict[str, str] | None = None, template_labels: dict[str, str] | None = None,
             pod_spec: dict[str, Any] | None = None, selector: dict[str, Any] | None = None
             ) -> dict[str, Any]:
    """A Deployment/StatefulSet manifest named ``app``."""
    meta: dict[str, Any] = {"name": "app", "labels": {keys.LABEL_TYPE: type_} if type_ is not None else {}}
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "x"}} if selector is None else selector,
        "template": {"metadata": {"labels": {"app": "x"} if template_labels is None else template_labels},
                     "spec": {"containers": [{"name": "c", "image": "pause"}], **(pod_spec or {})}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}


def hpa(*, min_: int | None = 1, max_: int = 1, type_: str | None = "server",
        annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """An autoscaling/v2 HPA manifest."""
    spec: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "app"},
                            "maxReplicas": max_}
    if min_ is not None:
        spec["minReplicas"] = min_
    meta: dict[str, Any] = {"name": "hpa", "labels": {keys.LABEL_TYPE: type_} if type_ else {},
                            "annotations": annotations or {}}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec}


def ns_annotations(ftt: str | None = None, zones: str | None = None, pinning: str | None = None
                   ) -> dict[str, str]:
    out = {}
    if ftt is not None:
        out[keys.ANNOTATION_FAILURE_TOLERANCE_TYPE] = ftt
    if zones is not None:
        out[keys.ANNOTATION_ZONES] = zones
    if pinning is not None:
        out[keys.ANNOTATION_ZONE_PINNING] = pinning
    return out


def admit(obj: Any, *, annotations: dict[str, str] | None = None, nodes: int = 3,
          hpas: Sequence[facts.HpaInfo] = (), settings: mutation.TolerationDefaults | None = None,
          group: str | None = None, version: str | None = None, kind: str | None = None,
          behaviour: Behaviour | None = None) -> mutation.Admission:
    kind = kind or (obj["kind"] if isinstance(obj, dict) else "Deployment")
    default_group = "autoscaling" if kind == "HorizontalPodAutoscaler" else "apps"
    request = mutation.Request(
        uid="u1", group=default_group if group is None else group,
        version=version or ("v2" if kind == "HorizontalPodAutoscaler" else "v1"), kind=kind,
        namespace=NS, name="app", operation="CREATE", obj=obj)
    cluster = facts.StaticFacts(namespaces={NS: facts.NamespaceInfo(NS, CONSIDER, annotations or {})},
                                hpa_list={NS: tuple(hpas)}, nodes=nodes)
    return mutation.admit(request, cluster, settings=settings, behaviour=behaviour)


def mutated(obj: Any, **kwargs: Any) -> dict[str, Any]:
    verdict = admit(obj, **kwargs)
    assert verdict.allowed, verdict
    result = patches.apply(obj, list(verdict.patch))
    assert result == verdict.mutated
    assert isinstance(result, dict)
    return result


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj["spec"]["template"]["spec"]
    assert isinstance(spec, dict)
    return spec


def scaled_by(max_replicas: int, kind: str = "Deployment") -> tuple[facts.HpaInfo]:
    return (facts.HpaInfo("h", "apps/v1", kind, "app", max_replicas),)


# §4 handler algorithm and §10 responses ------------------------------------------------------------


class _Broken:
    def __init__(self, fail: str) -> None:
        self.fail = fail

    def namespace(self, name: str) -> facts.NamespaceInfo:
        if self.fail == "namespace":
            raise facts.FactsError('namespaces "team" not found')
        return facts.NamespaceInfo(name)

    def hpas(self, namespace: str) -> Sequence[facts.HpaInfo]:
        if self.fail == "hpas":
            raise facts.FactsError("connection refused")
        return ()

    def node_count(self) -> int:
        if self.fail == "nodes":
            raise facts.FactsError("connection refused")
        return 3

    def synced(self) -> bool:
        return True


@pytest.mark.parametrize(("fail", "message"), [
    ("namespace", 'namespaces "team" not found'),
    ("hpas", "failed to list all HPAs: connection refused"),
    ("nodes", "failed to list nodes: connection refused"),
])
@pytest.mark.parametrize("kind", ["Deployment", "Pod"])
def test_cluster_read_failures_error_500_even_for_unexpected_kinds(fail: str, message: str,
                                                                   kind: str) -> None:
    group = "apps" if kind != "Pod" else ""
    request = mutation.Request("u", group, "v1", kind, NS, "app", "CREATE", workload())
    verdict = mutation.admit(request, _Broken(fail))
    assert (verdict.allowed, verdict.code, verdict.message) == (False, 500, message)


@pytest.mark.parametrize(("group", "kind", "shown"), [
    ("", "Pod", "Pod"), ("apps", "DaemonSet", "DaemonSet.apps"), ("batch", "Deployment", "Deployment.batch")])
def test_unexpected_resources_are_allowed_with_a_message(group: str, kind: str, shown: str) -> None:
    verdict = admit(workload(), group=group, kind=kind)
    assert (verdict.allowed, verdict.code, verdict.message, verdict.patch) == (
        True, 200, f"unexpected resource: {shown}", ())


def test_hpa_in_another_autoscaling_version_is_denied() -> None:
    verdict = admit(hpa(), version="v1")
    assert (verdict.allowed, verdict.code) == (False, 403)
    assert verdict.message == 'autoscaling version "v1" in request is not supported'


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "HorizontalPodAutoscaler"])
def test_missing_object_is_denied_with_the_decoder_message(kind: str) -> None:
    verdict = admit(None, kind=kind)
    assert (verdict.allowed, verdict.code, verdict.reason) == (False, 403, "Forbidden")
    assert verdict.message == "there is no content to decode"


@pytest.mark.parametrize(("obj", "fragment"), [
    ([1, 2], "cannot unmarshal array into Go value of type v1.Deployment"),
    ({"spec": {"replicas": "2"}}, "cannot unmarshal string into Go struct field Deployment.spec.replicas"),
    ({"spec": {"replicas": 2.5}}, "number 2.5"),
    ({"spec": {"replicas": True}}, "cannot unmarshal bool"),
    ({"spec": {"replicas": 2**31}}, "of type int32"),
    ({"metadata": {"labels": {"a": 1}}}, "Deployment.metadata.labels of type string"),
    ({"spec": {"template": {"spec": {"tolerations": {}}}}}, "of type []v1.Toleration"),
])
def test_undecodable_objects_are_denied(obj: Any, fragment: str) -> None:
    verdict = admit(obj, kind="Deployment")
    assert (verdict.allowed, verdict.code) == (False, 403)
    assert fragment in verdict.message


def test_nothing_to_change_gives_no_patch() -> None:
    verdict = admit(workload(type_=None, replicas=1))
    assert (verdict.allowed, verdict.code, verdict.patch) == (True, 200, ())


def test_nulls_are_absent_fields() -> None:
    obj = workload(replicas=3, pod_spec={"affinity": None, "tolerations": None,
                                         "topologySpreadConstraints": None})
    result = mutated(obj, annotations=ns_annotations(ftt="node", zones="z1"))
    assert result["spec"]["replicas"] == 2
    assert pod_spec(result)["affinity"]["nodeAffinity"]
    assert len(pod_spec(result)["topologySpreadConstraints"]) == 1


# §5 replicas ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("type_", "ftt", "want"), [
    ("controller", None, 2), ("controller", "", 1), ("controller", "node", 2), ("controller", "zone", 2),
    ("controller", "foo", 2), ("server", None, 2), ("server", "", 2), ("server", "zone", 2),
    ("other", "", 2),
])
@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
@pytest.mark.parametrize("zones", [None, "z1", "z1,z2,z3"])
def test_replica_table(type_: str, ftt: str | None, want: int, kind: str, zones: str | None) -> None:
    result = mutated(workload(kind, replicas=1, type_=type_),
                     annotations=ns_annotations(ftt=ftt, zones=zones))
    assert result["spec"]["replicas"] == want


@pytest.mark.parametrize("replicas", [0, None])
def test_zero_or_absent_replicas_are_never_touched_or_parsed(replicas: int | None) -> None:
    obj = workload(replicas=replicas, annotations={keys.ANNOTATION_REPLICAS: "three"})
    assert mutated(obj)["spec"].get("replicas") == replicas


@pytest.mark.parametrize("type_", [None, ""])
def test_no_type_label_means_replicas_untouched_and_annotation_unparsed(type_: str | None) -> None:
    obj = workload(replicas=5, type_=type_, annotations={keys.ANNOTATION_REPLICAS: "three"})
    assert mutated(obj)["spec"]["replicas"] == 5


def test_type_label_on_the_template_only_does_not_count() -> None:
    obj = workload(replicas=5, type_=None, template_labels={"app": "x", keys.LABEL_TYPE: "server"})
    assert mutated(obj)["spec"]["replicas"] == 5


@pytest.mark.parametrize(("annotation", "want"), [
    ("", 2), ("3", 3), ("+4", 4), ("0", 0), ("-1", -1), ("4294967298", 2)])
def test_replicas_annotation_overrides_the_table(annotation: str, want: int) -> None:
    obj = workload(replicas=1, annotations={keys.ANNOTATION_REPLICAS: annotation})
    assert mutated(obj)["spec"]["replicas"] == want


def test_without_hpa_replicas_are_scaled_down() -> None:
    assert mutated(workload(replicas=5))["spec"]["replicas"] == 2
    controller = workload(replicas=3, type_="controller")
    assert mutated(controller, annotations=ns_annotations(ftt=""))["spec"]["replicas"] == 1


@pytest.mark.parametrize(("current", "want"), [(1, 2), (2, 2), (6, 6)])
def test_hpa_scaled_workloads_are_only_scaled_up(current: int, want: int) -> None:
    result = mutated(workload(replicas=current), hpas=scaled_by(4))
    assert result["spec"]["replicas"] == want


def test_hpa_detection_needs_exact_api_version_kind_and_name() -> None:
    for info in (facts.HpaInfo("h", "apps/v1beta1", "Deployment", "app", 9),
                 facts.HpaInfo("h", "apps/v1", "StatefulSet", "app", 9),
                 facts.HpaInfo("h", "apps/v1", "Deployment", "other", 9)):
        assert mutated(workload(replicas=5), hpas=(info,))["spec"]["replicas"] == 2


def test_first_matching_hpa_wins() -> None:
    hpas = (facts.HpaInfo("a", "apps/v1", "Deployment", "app", 5), facts.HpaInfo("b", "apps/v1", "Deployment",
                                                                                   "app", 100))
    result = mutated(workload(replicas=2, annotations={keys.ANNOTATION_HOST_SPREAD: "true"}), hpas=hpas)
    assert pod_spec(result)["topologySpreadConstraints"][0]["minDomains"] == 3


@pytest.mark.parametrize("value", ["three", " 3", "3.0", "0x10", "1e3"])
def test_invalid_replicas_annotation_is_denied(value: str) -> None:
    verdict = admit(workload(annotations={keys.ANNOTATION_REPLICAS: value}))
    assert (verdict.allowed, verdict.code, verdict.reason) == (False, 403, "Forbidden")
    assert verdict.message == f'strconv.Atoi: parsing "{value}": invalid syntax'


# §6 HPA --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("ftt", "min_", "max_", "annotation", "want"), [
    ("zone", 1, 1, None, (2, 2)),
    ("", 1, 1, None, (2, 2)),            # server: 2
    (None, 2, 3, "5", (5, 5)),
    (None, 1, 2, "12", (12, 12)),
    (None, 12, 16, None, (12, 16)),
    (None, 3, 5, "1", (3, 5)),
    (None, 3, 2, "1", (3, 1)),           # min kept, max < min → max = want (literal spec)
    (None, 1, 8, None, (2, 8)),
])
def test_hpa_min_and_max(ftt: str | None, min_: int, max_: int, annotation: str | None,
                         want: tuple[int, int]) -> None:
    annotations = {keys.ANNOTATION_REPLICAS: annotation} if annotation else None
    obj = hpa(min_=min_, max_=max_, annotations=annotations)
    result = mutated(obj, annotations=ns_annotations(ftt=ftt))
    assert (result["spec"]["minReplicas"], result["spec"]["maxReplicas"]) == want


def test_hpa_controller_with_empty_ftt_is_unchanged() -> None:
    verdict = admit(hpa(type_="controller"), annotations=ns_annotations(ftt=""))
    assert verdict.allowed and verdict.patch == ()


@pytest.mark.parametrize(("min_", "type_"), [(None, "server"), (0, "server"), (1, None)])
def test_hpa_without_min_or_type_is_untouched(min_: int | None, type_: str | None) -> None:
    obj = hpa(min_=min_, type_=type_, annotations={keys.ANNOTATION_REPLICAS: "bad"})
    verdict = admit(obj)
    assert verdict.allowed and verdict.patch == ()


def test_hpa_gets_no_pod_mutations_and_bad_annotation_is_denied() -> None:
    result = mutated(hpa(), annotations=ns_annotations(ftt="zone", zones="a,b"),
                     settings=mutation.TolerationDefaults(60, 60))
    assert set(result["spec"]) == {"scaleTargetRef", "minReplicas", "maxReplicas"}
    verdict = admit(hpa(annotations={keys.ANNOTATION_REPLICAS: "x"}))
    assert verdict.message == 'strconv.Atoi: parsing "x": invalid syntax'


# §7 node affinity ----------------------------------------------------------------------------------


def zone_term(*zones: str) -> dict[str, Any]:
    return {"key": keys.TOPOLOGY_ZONE, "operator": "In", "values": list(zones)}


def required_terms(obj: dict[str, Any]) -> list[dict[str, Any]]:
    terms = pod_spec(obj)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return list(terms["nodeSelectorTerms"])


@pytest.mark.parametrize(("annotations", "pinned"), [
    (ns_annotations(ftt="", zones="b,a"), True),
    (ns_annotations(ftt="node", zones="b,a"), True),
    (ns_annotations(pinning="true", zones="b,a"), True),
    (ns_annotations(pinning="1", zones="b,a"), True),
    (ns_annotations(pinning="yes", zones="b,a"), False),
    (ns_annotations(zones="b,a"), False),
    (ns_annotations(ftt="zone"), False),
    (ns_annotations(ftt="zone", zones=",,"), False),
])
@pytest.mark.parametrize(("type_", "replicas"), [("server", 1), (None, 0)])
def test_zone_pinning_enabled_by_ftt_presence_or_flag(annotations: dict[str, str], pinned: bool,
                                                      type_: str | None, replicas: int) -> None:
    result = mutated(workload("StatefulSet", type_=type_, replicas=replicas), annotations=annotations)
    if pinned:
        assert required_terms(result) == [{"matchExpressions": [zone_term("a", "b")]}]
    else:
        assert "affinity" not in pod_spec(result)


def test_zone_expressions_are_replaced_in_every_term_and_the_rest_kept() -> None:
    affinity = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [zone_term("z9"), {"key": "pool", "operator": "In", "values": ["a"]},
                                  {"key": keys.TOPOLOGY_ZONE, "operator": "NotIn", "values": ["z1"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]},
        "podAntiAffinity": {"x": 1}}
    result = mutated(workload(pod_spec={"affinity": affinity}),
                     annotations=ns_annotations(ftt="", zones="z1"))
    assert required_terms(result) == [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}, zone_term("z1")]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
         "matchExpressions": [zone_term("z1")]}]
    assert pod_spec(result)["affinity"]["podAntiAffinity"] == {"x": 1}
    node_affinity = pod_spec(result)["affinity"]["nodeAffinity"]
    preferred = node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred == [{"weight": 1, "preference": {}}]


def test_empty_term_list_gets_one_term() -> None:
    affinity: dict[str, Any] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    result = mutated(workload(pod_spec={"affinity": affinity}),
                     annotations=ns_annotations(ftt="", zones="z1"))
    assert required_terms(result) == [{"matchExpressions": [zone_term("z1")]}]


def test_zones_are_deduplicated_sorted_and_not_trimmed() -> None:
    result = mutated(workload(), annotations=ns_annotations(ftt="node", zones="c,a,b,a,, b"))
    assert required_terms(result) == [{"matchExpressions": [zone_term(" b", "a", "b", "c")]}]


# §8 topology spread constraints --------------------------------------------------------------------

SEL = {"matchLabels": {"app": "x"}}


def host(strict: bool, min_domains: int | None = None, sel: dict[str, Any] = SEL, mlk: bool = True
         ) -> dict[str, Any]:
    c: dict[str, Any] = {"topologyKey": keys.TOPOLOGY_HOSTNAME, "maxSkew": 1,
                         "whenUnsatisfiable": "DoNotSchedule" if strict else "ScheduleAnyway",
                         "labelSelector": sel}
    if min_domains is not None:
        c["minDomains"] = min_domains
    if mlk:
        c["matchLabelKeys"] = [keys.POD_TEMPLATE_HASH]
    return c


def zone(min_domains: int, sel: dict[str, Any] = SEL, mlk: bool = True) -> dict[str, Any]:
    c: dict[str, Any] = {"topologyKey": keys.TOPOLOGY_ZONE, "maxSkew": 1,
                         "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel,
                         "minDomains": min_domains}
    if mlk:
        c["matchLabelKeys"] = [keys.POD_TEMPLATE_HASH]
    return c


@pytest.mark.parametrize(("ftt", "spread", "zones", "nodes", "expected"), [
    (None, None, "z1", 3, [host(False)]),
    (None, None, "z1,z2", 3, [host(False), zone(2)]),
    (None, "true", "z1,z2,z3", 3, [host(True, 3), zone(3)]),
    ("", None, "z1,z2,z3", 3, [host(False)]),
    ("", "true", "z1,z2,z3", 3, [host(True, 3)]),
    ("node", None, "z1,z2,z3", 3, [host(True, 3)]),
    ("foo", "false", None, 3, [host(True, 3)]),
    ("Zone", None, "z1,z2", 3, [host(True, 3)]),
    ("zone", None, "z1,z2", 3, [host(True, 3), zone(2)]),
    ("zone", None, "z1", 3, [host(True, 3)]),
    ("zone", None, "z1,z2,z3", 1, [host(False), zone(3)]),
    ("node", "true", None, 0, [host(False)]),
    (None, "true", "z1,z2", 1, [host(False), zone(2)]),
])
def test_decision_table(ftt: str | None, spread: str | None, zones: str | None, nodes: int,
                        expected: list[dict[str, Any]]) -> None:
    annotations = {keys.ANNOTATION_HOST_SPREAD: spread} if spread else None
    obj = workload(replicas=3, type_=None, annotations=annotations)
    result = mutated(obj, annotations=ns_annotations(ftt=ftt, zones=zones), nodes=nodes)
    assert pod_spec(result)["topologySpreadConstraints"] == expected


@pytest.mark.parametrize(("replicas", "hpa_max", "host_min", "zone_min"), [
    (2, None, 2, 2), (3, None, 3, 3), (5, None, 3, 4), (2, 4, 3, 4), (2, 3, 3, 3), (2, 2, 2, 2),
    (6, 4, 3, 4)])
def test_min_domains_use_hpa_max_unless_replicas_exceed_it(replicas: int, hpa_max: int | None, host_min: int,
                                                           zone_min: int) -> None:
    result = mutated(workload(replicas=replicas, type_=None),
                     annotations=ns_annotations(ftt="zone", zones="a,b,c,d"),
                     hpas=scaled_by(hpa_max) if hpa_max else ())
    assert pod_spec(result)["topologySpreadConstraints"] == [host(True, host_min), zone(zone_min)]


def test_host_spread_is_read_from_the_object_not_the_template() -> None:
    obj = workload(replicas=2, type_=None)
    obj["spec"]["template"]["metadata"]["annotations"] = {keys.ANNOTATION_HOST_SPREAD: "true"}
    assert pod_spec(mutated(obj))["topologySpreadConstraints"] == [host(False)]


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_single_replica_keeps_existing_constraints(kind: str) -> None:
    stale = [host(True, 2, mlk=False), zone(3, mlk=False)]
    result = mutated(workload(kind, replicas=1, type_=None, pod_spec={"topologySpreadConstraints": stale}),
                     annotations=ns_annotations(zones="a,b"))
    expected = [host(True, 2), zone(3)] if kind == "Deployment" else stale
    assert pod_spec(result)["topologySpreadConstraints"] == expected


def test_merge_drops_old_spread_keys_keeps_others_in_order() -> None:
    existing = [{"topologyKey": "rack", "maxSkew": 2}, host(True, 9), {"topologyKey": "row", "maxSkew": 1},
                zone(7)]
    result = mutated(workload("StatefulSet", replicas=2, pod_spec={"topologySpreadConstraints": existing}),
                     annotations=ns_annotations(zones="a,b"))
    assert pod_spec(result)["topologySpreadConstraints"] == [
        {"topologyKey": "rack", "maxSkew": 2}, {"topologyKey": "row", "maxSkew": 1},
        host(False, mlk=False), zone(2, mlk=False)]


def test_deployment_selects_on_template_labels_statefulset_on_spec_selector() -> None:
    labels = {"app": "x", "rev": "7"}
    selector = {"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "t", "operator": "Exists"}]}
    dep = mutated(workload(replicas=2, template_labels=labels, selector=selector))
    sts = mutated(workload("StatefulSet", replicas=2, template_labels=labels, selector=selector))
    assert pod_spec(dep)["topologySpreadConstraints"] == [host(False, sel={"matchLabels": labels})]
    assert pod_spec(sts)["topologySpreadConstraints"] == [host(False, sel=selector, mlk=False)]


def test_deployment_without_template_labels_selects_with_an_empty_selector() -> None:
    result = mutated(workload(replicas=2, template_labels={}))
    assert pod_spec(result)["topologySpreadConstraints"] == [host(False, sel={})]


@pytest.mark.parametrize("replicas", [0, 1, 3])
def test_statefulset_without_selector_panics(replicas: int) -> None:
    obj = workload("StatefulSet", replicas=replicas)
    del obj["spec"]["selector"]
    verdict = admit(obj)
    assert (verdict.allowed, verdict.code, verdict.message) == (False, 500, mutation.NIL_POINTER_PANIC)


def test_match_label_keys_added_once_to_every_deployment_constraint() -> None:
    existing = [{"topologyKey": "rack"},
                {"topologyKey": "row", "matchLabelKeys": ["v", keys.POD_TEMPLATE_HASH]},
                {"topologyKey": "room", "matchLabelKeys": ["v"]}]
    result = mutated(workload(replicas=1, type_=None, pod_spec={"topologySpreadConstraints": existing}))
    assert [c["matchLabelKeys"] for c in pod_spec(result)["topologySpreadConstraints"]] == [
        [keys.POD_TEMPLATE_HASH], ["v", keys.POD_TEMPLATE_HASH], ["v", keys.POD_TEMPLATE_HASH]]


# §9 tolerations ------------------------------------------------------------------------------------

NOT_READY, UNREACHABLE = keys.TAINT_NOT_READY, keys.TAINT_UNREACHABLE


def toleration(key: str, seconds: int) -> dict[str, Any]:
    return {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}


@pytest.mark.parametrize(("existing", "settings", "added"), [
    ([], mutation.TolerationDefaults(60, 120), [toleration(NOT_READY, 60), toleration(UNREACHABLE, 120)]),
    ([], mutation.TolerationDefaults(None, 120), [toleration(UNREACHABLE, 120)]),
    ([], mutation.TolerationDefaults(), []),
    ([{"key": NOT_READY, "effect": "NoExecute", "operator": "Equal", "tolerationSeconds": 5}],
     mutation.TolerationDefaults(60, 60), [toleration(UNREACHABLE, 60)]),
    ([{"key": NOT_READY}], mutation.TolerationDefaults(60, 60), [toleration(UNREACHABLE, 60)]),
    ([{"key": NOT_READY, "effect": "NoSchedule"}], mutation.TolerationDefaults(60, 60),
     [toleration(NOT_READY, 60), toleration(UNREACHABLE, 60)]),
    ([{"operator": "Exists"}], mutation.TolerationDefaults(60, 60),
     [toleration(NOT_READY, 60), toleration(UNREACHABLE, 60)]),
    ([{"key": UNREACHABLE, "effect": ""}, {"key": NOT_READY, "effect": "NoExecute"}],
     mutation.TolerationDefaults(1, 1), []),
])
@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_tolerations(existing: list[dict[str, Any]], settings: mutation.TolerationDefaults,
                     added: list[dict[str, Any]], kind: str) -> None:
    obj = workload(kind, replicas=0, type_=None, pod_spec={"tolerations": copy.deepcopy(existing)})
    result = mutated(obj, settings=settings)
    assert pod_spec(result).get("tolerations", []) == existing + added


# §4 idempotence ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
@pytest.mark.parametrize("annotations", [ns_annotations(ftt="zone", zones="b,a,c"), ns_annotations(ftt=""),
                                         ns_annotations(pinning="true", zones="z1"), {}])
def test_mutation_is_idempotent(kind: str, annotations: dict[str, str]) -> None:
    obj = workload(kind, replicas=1, pod_spec={"topologySpreadConstraints": [{"topologyKey": "rack"}]})
    once = mutated(obj, annotations=annotations, settings=mutation.TolerationDefaults(1, 2))
    again = admit(once, annotations=annotations, settings=mutation.TolerationDefaults(1, 2))
    assert again.allowed and again.patch == ()
