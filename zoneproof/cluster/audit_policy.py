"""The API server's audit policy of every backend that runs one: who deleted which pod, when."""

from __future__ import annotations

import yaml

__all__ = ["AUDIT_POLICY", "CONTROLLER_GROUP", "MODEL_EXECUTOR_GROUP", "NODE_LIFECYCLE_USER",
           "SERVICE_ACCOUNTS_GROUP", "audit_policy_yaml"]

#: The group of every HA controller replica under test (its client certificate's O).
CONTROLLER_GROUP = "zoneproof:ha-controllers"
#: The group of every ServiceAccount (an in-cluster controller's pods act as one).
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
#: The group of the generated controller suite's schedule executor: every write it makes
#: (nodes, their status, pods, their status, Leases, its markers) is the history its model
#: judges, so the API server records it with the object it left and its revision.
MODEL_EXECUTOR_GROUP = "zoneproof:model-executors"
#: kube-controller-manager's node lifecycle controller (with --use-service-account-credentials):
#: its Ready=Unknown and not-ready/unreachable taints are part of that history too.
NODE_LIFECYCLE_USER = "system:serviceaccount:kube-system:node-controller"

#: Audit only what attribution needs (RequestResponse where the object a write left and its
#: revision order it, RequestReceived omitted): pod deletions (with the delete options and
#: the pod deleted), and Lease writes outside the system namespaces (with the holder they
#: left: a delete is ordered against the holder changes by the API server's own record,
#: revisions) — whoever the controller is: a host replica
#: (group ``CONTROLLER_GROUP``) or an in-cluster pod with its ServiceAccount, in whatever
#: namespace its manifests put its Lease. Kubelets' (kube-node-lease) and the control
#: plane's (kube-system) renewals are left out. The controllers' Lease reads too (a
#: standby competes by reading a held Lease: the conformance suite waits until it has seen
#: the standby try, and try again, before failing the leader); not the suite's own polls.
#: The in-cluster controller's pods read as ServiceAccounts.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "RequestResponse", "userGroups": [MODEL_EXECUTOR_GROUP],
         "verbs": ["create", "update", "patch", "delete"],
         "resources": [{"group": "", "resources": ["nodes", "nodes/status", "pods",
                                                   "pods/status", "configmaps"]},
                       {"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "RequestResponse", "users": [NODE_LIFECYCLE_USER],
         "verbs": ["update", "patch"],
         "resources": [{"group": "", "resources": ["nodes", "nodes/status"]}]},
        {"level": "RequestResponse", "verbs": ["delete"],
         "resources": [{"group": "", "resources": ["pods"]}]},
        {"level": "Metadata", "verbs": ["deletecollection"],
         "resources": [{"group": "", "resources": ["pods"]}]},
        {"level": "None", "namespaces": ["kube-node-lease", "kube-system"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "RequestResponse", "verbs": ["create", "update", "patch"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "Metadata", "verbs": ["get"],
         "userGroups": [CONTROLLER_GROUP, SERVICE_ACCOUNTS_GROUP],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "None"},
    ],
}


def audit_policy_yaml() -> str:
    """The audit policy file's text."""
    return yaml.safe_dump(AUDIT_POLICY, sort_keys=False)
