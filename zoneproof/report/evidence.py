"""Evidence read back from the cluster during a run, into ``<report dir>/evidence/``.

What the certification bundle says about the cluster and the registration comes from
here, measured, never from settings: ``save_registration`` writes the
MutatingWebhookConfiguration as the API server stored it (defaults filled in);
``save_cluster`` writes the versions the cluster reports (API server, etcd as the API
server's metrics name it, each node's kubelet and runtime). The plugin's fixtures call
them while the run is on; the certify suite packs the files.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client

from zoneproof._util import kube
from zoneproof.specs.kubernetes import ZONE_LABEL

__all__ = ["CLUSTER", "EVIDENCE", "REGISTRATION_PREFIX", "measure_cluster", "registrations",
           "save_cluster", "save_registration"]

EVIDENCE = "evidence"
CLUSTER = "cluster.json"
REGISTRATION_PREFIX = "registration-"
_ETCD_VERSION = re.compile(r'^etcd_version_info\{[^}]*binary_version="([^"]+)"', re.MULTILINE)


def _write(path: Path, data: Any) -> Path:
    """Write JSON atomically (several xdist workers may write the same file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")
    partial.replace(path)
    return path


def save_registration(kubeconfig: Path, name: str, report_dir: Path) -> Path:
    """The MutatingWebhookConfiguration ``name`` as the API server stored it, as JSON."""
    with kube.api_client(kubeconfig) as api:
        stored = client.AdmissionregistrationV1Api(api).read_mutating_webhook_configuration(name)
        data = api.sanitize_for_serialization(stored)
    data.get("metadata", {}).pop("managedFields", None)
    return _write(report_dir / EVIDENCE / f"{REGISTRATION_PREFIX}{name}.json", data)


def registrations(report_dir: Path) -> list[Path]:
    """The registrations a run saved."""
    return sorted((report_dir / EVIDENCE).glob(f"{REGISTRATION_PREFIX}*.json"))


def _etcd_version(api: client.ApiClient) -> str:
    """etcd's version as the API server's ``etcd_version_info`` metric names it."""
    try:
        response = kube.get_path(api, "/metrics", timeout_s=10)
    except (client.ApiException, urllib3.exceptions.HTTPError) as exc:
        return f"not measured: GET /metrics failed ({exc})"
    found = sorted(set(_ETCD_VERSION.findall(response.data.decode(errors="replace"))))
    return ", ".join(found) or "not measured: the API server's metrics have no etcd_version_info"


def measure_cluster(kubeconfig: Path) -> dict[str, Any]:
    """Versions as the cluster reports them: API server, etcd, nodes (counts per value)."""
    with kube.api_client(kubeconfig) as api:
        version = api.sanitize_for_serialization(client.VersionApi(api).get_code())
        nodes = client.CoreV1Api(api).list_node().items
        etcd = _etcd_version(api)
    infos = [n.status.node_info for n in nodes]

    def count(values: list[str]) -> dict[str, int]:
        return dict(sorted(Counter(values).items()))

    return {"kubernetes": {k: version.get(k) for k in ("gitVersion", "goVersion", "platform",
                                                      "buildDate")},
            "etcd": etcd,
            "nodes": {"count": len(nodes),
                      "zones": count([(n.metadata.labels or {}).get(ZONE_LABEL, "(none)")
                                      for n in nodes]),
                      "kubelet": count([i.kubelet_version for i in infos]),
                      "container_runtime": count([i.container_runtime_version for i in infos]),
                      "os_image": count([i.os_image for i in infos]),
                      "architecture": count([i.architecture for i in infos])}}


def save_cluster(kubeconfig: Path, report_dir: Path) -> Path:
    """``measure_cluster`` to ``<report dir>/evidence/cluster.json``."""
    return _write(report_dir / EVIDENCE / CLUSTER, measure_cluster(kubeconfig))
