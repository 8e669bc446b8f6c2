"""Generated cases through a real API server never leave their object where the cluster's HPA
controller rescales it (``casegen.rescaled_by_the_hpa_controller``).

Found on kind (seed 1260549311, case gen-2b752c53): a StatefulSet of 3 replicas without the
type label, then an HPA of maxReplicas 1 put on it; kube-controller-manager's HPA controller
clamped it to 1 through ``/scale`` (which never calls the webhook, spec §3) before the step
read it, and the reference was judged "patched: replicas 3 -> 1".
"""

from __future__ import annotations

from pathlib import Path

import yaml

from zoneproof.conformance.ha_config import casegen, cases, generated
from zoneproof.specs.ha_config import facts

_STATEFULSET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "web", "labels": {"team": "a"}},
    "spec": {"replicas": 3, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}}


def _hpa(name: str, max_replicas: int, *, api_version: str = "apps/v1", kind: str = "StatefulSet",
         target: str = "web") -> dict[str, object]:
    return {"name": name, "scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": target},
            "maxReplicas": max_replicas}


def _case(tmp_path: Path, steps: list[dict[str, object]], *, hpas: list[dict[str, object]] | None = None,
          replicas: int = 3) -> cases.Case:
    obj = {**_STATEFULSET, "spec": {**_STATEFULSET["spec"], "replicas": replicas}}  # type: ignore[dict-item]
    body = {"id": "hpa-controller", "description": "test", "spec": "§5",
            "namespace": {"labels": {"high-availability-config.resources.gardener.cloud/consider": "true"}},
            "cluster": {"nodes": 3}, "object": obj,
            "steps": [{**step, "expect": {"replicas": replicas}} for step in steps]}
    if hpas:
        body["hpas"] = hpas
    path = tmp_path / "hpa-controller.yaml"
    path.write_text(yaml.safe_dump(body))
    judged, settled = casegen.with_expectations(cases.load_case(path))
    assert settled
    return judged


def test_an_hpa_put_below_the_replicas_is_the_hpa_controllers_to_rescale(tmp_path: Path) -> None:
    case = _case(tmp_path, [{"operation": "CREATE"}, {"put_hpa": _hpa("hpa-new-1", 1)},
                            {"annotate_namespace": {"x": "y"}}])
    reason = casegen.rescaled_by_the_hpa_controller(case)
    assert reason is not None and reason.startswith("steps[1] put HPA hpa-new-1")
    assert "maxReplicas 1" in reason


def test_the_hpa_controller_finds_its_target_by_group_kind_and_name(tmp_path: Path) -> None:
    # a version the webhook does not recognise (§4 step 3) is still the HPA controller's target
    older = _case(tmp_path, [{"operation": "CREATE"},
                             {"put_hpa": _hpa("h", 2, api_version="apps/v1beta1")}])
    assert casegen.rescaled_by_the_hpa_controller(older) is not None
    for other in (_hpa("h", 2, kind="Deployment"), _hpa("h", 2, target="other"),
                  _hpa("h", 2, api_version="extensions/v1beta1")):
        case = _case(tmp_path, [{"operation": "CREATE"}, {"put_hpa": other}])
        assert casegen.rescaled_by_the_hpa_controller(case) is None, other


def test_replicas_within_the_range_or_zero_or_the_hpa_gone_are_left_alone(tmp_path: Path) -> None:
    within = _case(tmp_path, [{"operation": "CREATE"}, {"put_hpa": _hpa("h", 3)},
                              {"operation": "UPDATE", "patch": {}}])
    assert casegen.rescaled_by_the_hpa_controller(within) is None
    zero = _case(tmp_path, [{"operation": "CREATE"}, {"put_hpa": _hpa("h", 1)}], replicas=0)
    assert casegen.rescaled_by_the_hpa_controller(zero) is None  # "scaling is disabled"
    gone = _case(tmp_path, [{"operation": "CREATE"}, {"delete_hpa": "h"},
                            {"operation": "UPDATE", "patch": {}}], hpas=[_hpa("h", 1)])
    reason = casegen.rescaled_by_the_hpa_controller(gone)
    assert reason is not None and reason.startswith("steps[0] CREATE")  # before the delete it could


def test_a_create_judged_alone_is_judged_on_the_api_servers_answer(tmp_path: Path) -> None:
    alone = _case(tmp_path, [{"operation": "CREATE"}], hpas=[_hpa("h", 1)])
    assert casegen.rescaled_by_the_hpa_controller(alone) is None
    followed = _case(tmp_path, [{"operation": "CREATE"}, {"operation": "UPDATE", "patch": {}}],
                     hpas=[_hpa("h", 1)])
    assert casegen.rescaled_by_the_hpa_controller(followed) is not None


def test_the_kind_seeds_scenarios_leave_no_object_to_the_hpa_controller() -> None:
    found = generated.scenario_cases(1260549311, 3, node_steps=False)
    assert len(found) == 3 and "gen-2b752c53" not in {c.id for c in found}
    for seed in range(6):
        for case in generated.scenario_cases(seed, 5, node_steps=seed % 2 == 0):
            assert casegen.rescaled_by_the_hpa_controller(case) is None, case.id


def test_the_range_check_itself() -> None:
    hpa = facts.HpaInfo("h", "apps/v1", "Deployment", "d", 2)
    obj: dict[str, object] = {"spec": {"replicas": 3}}
    assert casegen.hpa_controller_rescales("Deployment", "d", obj, [hpa]) == hpa  # type: ignore[arg-type]
    assert casegen.hpa_controller_rescales("Deployment", "d", {"spec": {"replicas": 2}}, [hpa]) is None
    assert casegen.hpa_controller_rescales("Deployment", "d", {"spec": {}}, [hpa]) is None  # defaulted 1
    assert casegen.hpa_controller_rescales("Deployment", "d", None, [hpa]) is None
