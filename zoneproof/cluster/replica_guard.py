"""A bed's guard against runaway replicas: a ValidatingAdmissionPolicy refusing workloads and
HPAs that ask for more than ``MOST_REPLICAS``.

A bed's controller manager turns what is stored into pods, and a StatefulSet of 2^31 - 1
replicas takes it past 3 GB in 4 s (its controller makes a slot per replica); on a 24 GiB
machine without swap that starved every test for an hour. Validating admission runs after
the mutating webhooks, so a webhook under test that writes such a count has its request
refused with this policy's message (a failing case that says why) instead. zoneproof's own
beds carry it; a user's cluster is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client

from zoneproof._util import kube, waiting

__all__ = ["MOST_REPLICAS", "NAME", "install", "manifests", "probe_body", "step"]

MOST_REPLICAS = 1000
"""The most replicas a bed stores (zoneproof's suites ask for at most 12; the scale bench
creates bare pods)."""
NAME = "zoneproof-replica-guard"
_ENFORCED_TIMEOUT_S = 30.0
"""The API server enforces a new policy once its informer has it (about a second)."""

def _validation(field: str, *, hpa: bool) -> dict[str, str]:
    """``spec.<field>`` at most ``MOST_REPLICAS``, on HPAs (``hpa``) or on the workloads."""
    other = f"request.resource.resource {'!=' if hpa else '=='} 'horizontalpodautoscalers'"
    return {
        "expression": f"{other} || !has(object.spec.{field}) || object.spec.{field} <= {MOST_REPLICAS}",
        "messageExpression": (f"'zoneproof bed guard: spec.{field} ' + string(object.spec.{field}) + "
                              f"' is above {MOST_REPLICAS}: the bed would make pods of it and run out of "
                              "memory (a mutating webhook or a test asked for it)'"),
        "reason": "Invalid",
    }


def manifests() -> list[dict[str, Any]]:
    """The policy (workloads and their /scale by spec.replicas, HPAs by spec.minReplicas)
    and its binding (every namespace; requests denied)."""
    rules = [
        {"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
         "resources": ["deployments", "statefulsets", "replicasets", "deployments/scale",
                       "statefulsets/scale", "replicasets/scale"]},
        {"apiGroups": ["autoscaling"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
         "resources": ["horizontalpodautoscalers"]},
    ]
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": NAME},
        "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
                 "validations": [_validation("replicas", hpa=False), _validation("minReplicas", hpa=True)]},
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": NAME},
        "spec": {"policyName": NAME, "validationActions": ["Deny"]},
    }
    return [policy, binding]


def step(kubeconfig: Path) -> tuple[str, Callable[[], None]]:
    """The bed creation step that installs the guard."""
    return (f"replica guard (a ValidatingAdmissionPolicy: at most {MOST_REPLICAS} replicas)",
            lambda: install(kubeconfig))


def install(kubeconfig: Path) -> None:
    """Create the policy and its binding on the bed of ``kubeconfig`` (replaced if there)."""
    api = kube.api_client(kubeconfig, request_timeout_s=30)
    admission = client.AdmissionregistrationV1Api(api)
    policy, binding = manifests()
    try:
        _put(policy, admission.create_validating_admission_policy,
             admission.read_validating_admission_policy, admission.replace_validating_admission_policy)
        _put(binding, admission.create_validating_admission_policy_binding,
             admission.read_validating_admission_policy_binding,
             admission.replace_validating_admission_policy_binding)
        waiting.wait_for(lambda: _refused(api), what=f"the API server to enforce {NAME}",
                         timeout_s=_ENFORCED_TIMEOUT_S, interval_s=0.2)
    finally:
        api.close()


def probe_body(replicas: int) -> dict[str, Any]:
    """A Deployment of ``replicas`` (sent with dryRun: nothing is stored)."""
    labels = {"app": "zoneproof-replica-guard-probe"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": labels["app"]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "probe", "image": "probe"}]}}}}


def _refused(api: client.ApiClient) -> tuple[bool, str]:
    """Whether a dry-run Deployment of one replica too many is refused by the guard."""
    try:
        client.AppsV1Api(api).create_namespaced_deployment("default", probe_body(MOST_REPLICAS + 1),
                                                           dry_run="All")
    except client.ApiException as e:
        return "zoneproof bed guard" in str(e.body), f"{e.status}: {e.body}"
    return False, f"a Deployment of {MOST_REPLICAS + 1} replicas was accepted (dry run)"


def _put(body: dict[str, Any], create: Callable[..., Any], read: Callable[..., Any],
         replace: Callable[..., Any]) -> None:
    try:
        create(body)
    except client.ApiException as e:
        if e.status != 409:
            raise
        version = read(NAME).metadata.resource_version
        replace(NAME, {**body, "metadata": {**body["metadata"], "resourceVersion": version}})
