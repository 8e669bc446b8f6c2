"""Health and leadership of etcd members, through etcd's JSON gateway on the client port.

Shared by the backends: both talk https with a client certificate of the cluster's etcd
CA (``tls_pool``: etcd requires client-certificate auth on client and peer ports).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import urllib3

from zoneproof import errors

__all__ = ["health_probe", "healthy", "leader", "member_status", "tls_pool"]

_http = urllib3.PoolManager(timeout=urllib3.Timeout(connect=0.5, read=2.0), retries=False)


def tls_pool(ca: Path, cert: Path, key: Path) -> urllib3.PoolManager:
    """A pool that verifies etcd against ``ca`` and presents client certificate ``cert``."""
    return urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=str(ca), cert_file=str(cert),
                               key_file=str(key), timeout=urllib3.Timeout(connect=0.5, read=2.0),
                               retries=False)


def member_status(client_url: str, pool: urllib3.PoolManager = _http) -> dict[str, Any] | None:
    """``/v3/maintenance/status`` of one member, or None when it does not answer."""
    try:
        response = pool.request("POST", f"{client_url}/v3/maintenance/status", body=b"{}")
    except urllib3.exceptions.HTTPError:
        return None
    if response.status != 200:
        return None
    data: dict[str, Any] = json.loads(response.data)
    return data


def healthy(client_url: str, pool: urllib3.PoolManager = _http) -> bool:
    """True if the member answers ``/health`` with health true (it has a leader)."""
    try:
        response = pool.request("GET", f"{client_url}/health")
    except urllib3.exceptions.HTTPError:
        return False
    return response.status == 200 and json.loads(response.data).get("health") == "true"


def health_probe(client_url: str, pool: urllib3.PoolManager = _http) -> tuple[bool, str]:
    """``healthy`` in the (done, observed) form of ``waiting.wait_for``."""
    ok = healthy(client_url, pool)
    return ok, f"{client_url} healthy={ok}"


def leader(urls: Mapping[str, str], cluster: str, pool: urllib3.PoolManager = _http) -> str:
    """The member (name → client URL) whose id the answering members report as leader.

    FaultError naming ``cluster`` and the answering members if there is none now (a member
    without a leader omits the field: the JSON gateway leaves out a zero id).
    """
    ids: dict[str, str] = {}
    leaders: set[str] = set()
    for member, url in urls.items():
        status = member_status(url, pool)
        if status is not None:
            ids[status["header"]["member_id"]] = member
            if status.get("leader"):
                leaders.add(status["leader"])
    for leader_id in leaders:
        if leader_id in ids:
            return ids[leader_id]
    raise errors.FaultError(f"etcd of cluster {cluster!r} has no leader now "
                            f"(answering members: {sorted(ids.values())})")
