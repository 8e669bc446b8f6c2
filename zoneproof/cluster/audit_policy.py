"""The API server's audit policy of every backend that runs one: who deleted which pod, when."""

from __future__ import annotations

import yaml

__all__ = ["AUDIT_POLICY", "audit_policy_yaml"]

#: Audit only what attribution needs: pod deletions (RequestReceived omitted).
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "verbs": ["delete", "deletecollection"],
         "resources": [{"group": "", "resources": ["pods"]}]},
        {"level": "None"},
    ],
}


def audit_policy_yaml() -> str:
    """The audit policy file's text."""
    return yaml.safe_dump(AUDIT_POLICY, sort_keys=False)
