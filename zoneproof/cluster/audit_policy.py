"""The API server's audit policy of every backend that runs one: who deleted which pod, when."""

from __future__ import annotations

import yaml

__all__ = ["AUDIT_POLICY", "CONTROLLER_GROUP", "audit_policy_yaml"]

#: The group of every HA controller replica under test (its client certificate's O).
CONTROLLER_GROUP = "zoneproof:ha-controllers"

#: Audit only what attribution needs (RequestReceived omitted): pod deletions, and Lease
#: writes outside the system namespaces (so a delete can be ordered after its author's
#: Lease write by the API server's own clock) — whoever the controller is: a host replica
#: (group ``CONTROLLER_GROUP``) or an in-cluster pod with its ServiceAccount, in whatever
#: namespace its manifests put its Lease. Kubelets' (kube-node-lease) and the control
#: plane's (kube-system) renewals are left out.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "verbs": ["delete", "deletecollection"],
         "resources": [{"group": "", "resources": ["pods"]}]},
        {"level": "None", "namespaces": ["kube-node-lease", "kube-system"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "Metadata", "verbs": ["create", "update", "patch"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "None"},
    ],
}


def audit_policy_yaml() -> str:
    """The audit policy file's text."""
    return yaml.safe_dump(AUDIT_POLICY, sort_keys=False)
