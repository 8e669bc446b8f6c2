"""The one Kubernetes client factory, raw GETs of non-resource paths through it, and the
reads every part of zoneproof makes the same way (a Lease's holder)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes import client, config

from zoneproof import errors

__all__ = ["TEARDOWN_REQUEST_TIMEOUT_S", "api_client", "default_kubeconfig", "get_path",
           "lease_holder", "teardown_client"]

#: Seconds a request of a run's teardown (sweeping its objects, keeping a bed's Events)
#: waits for an answer: an API server that stopped answering must not hold the run's end.
TEARDOWN_REQUEST_TIMEOUT_S = 30.0


def api_client(kubeconfig: Path | None = None, *, context: str | None = None,
               retries: int | None = None, temp_dir: Path | None = None,
               pool_maxsize: int | None = None,
               request_timeout_s: float | None = None) -> client.ApiClient:
    """An ApiClient for ``kubeconfig`` (None: $KUBECONFIG / ~/.kube/config, or in-cluster).

    ``retries`` bounds urllib3's connection retries (0 for health probes that must answer
    at once); None keeps the client's default. ``temp_dir``: where the loader writes the
    certificate and key files of embedded ``*-data`` (default: the system's temp dir, removed
    only by an atexit hook, which ``os._exit`` and signals skip). ``pool_maxsize``: HTTP
    connections kept per host; size it to the threads that use the client at once (the
    default, 5 per CPU, makes urllib3 drop and reopen connections, warning "Connection pool
    is full"). ``request_timeout_s``: the timeout of every request that names none (without
    it such a request waits for an answer forever).
    """
    configuration = client.Configuration()
    if kubeconfig is None:
        try:
            config.load_kube_config(context=context, client_configuration=configuration,
                                    temp_file_path=_temp_path(temp_dir))
        except config.ConfigException:
            config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(config_file=str(kubeconfig), context=context,
                                client_configuration=configuration, temp_file_path=_temp_path(temp_dir))
    if retries is not None:
        configuration.retries = retries
    if pool_maxsize is not None:
        configuration.connection_pool_maxsize = pool_maxsize
    api = client.ApiClient(configuration)
    if request_timeout_s is not None:
        _bound_requests(api, request_timeout_s)
    return api


def teardown_client(kubeconfig: Path) -> client.ApiClient:
    """A client for a run's teardown: one connection retry, every request bounded by
    ``TEARDOWN_REQUEST_TIMEOUT_S``."""
    return api_client(kubeconfig, retries=1, request_timeout_s=TEARDOWN_REQUEST_TIMEOUT_S)


def _bound_requests(api: client.ApiClient, timeout_s: float) -> None:
    """Give each request of ``api`` that names no ``_request_timeout`` ``timeout_s``."""
    unbounded = api.rest_client.request

    def request(method: str, url: str, *args: Any, _request_timeout: Any = None,
                **kwargs: Any) -> Any:
        return unbounded(method, url, *args, _request_timeout=_request_timeout or timeout_s,
                         **kwargs)

    api.rest_client.request = request


def _temp_path(temp_dir: Path | None) -> str | None:
    return None if temp_dir is None else str(temp_dir)


def get_path(api: client.ApiClient, path: str, *, timeout_s: float) -> Any:
    """GET a non-resource path (``/readyz``, ``/metrics``) with the client's credentials; the
    response is read (``.status``, ``.data``). Raises ApiException / urllib3 errors."""
    request = api.param_serialize("GET", path, auth_settings=["BearerToken"])
    response = api.call_api(*request, _request_timeout=timeout_s)
    response.read()
    return response


def lease_holder(api: client.ApiClient, namespace: str, name: str, *,
                 timeout_s: float | None = None) -> str:
    """holderIdentity of Lease ``namespace/name`` now ('' if free or absent)."""
    try:
        lease = client.CoordinationV1Api(api).read_namespaced_lease(
            name, namespace, _request_timeout=timeout_s)
    except client.ApiException as exc:
        if exc.status == 404:
            return ""
        raise
    return str(lease.spec.holder_identity or "")


def delete_namespace(core: client.CoreV1Api, name: str) -> None:
    """Start deleting namespace ``name``; one already gone is fine (404)."""
    try:
        core.delete_namespace(name)
    except client.ApiException as exc:
        if exc.status != 404:
            raise


def namespace_gone(core: client.CoreV1Api, name: str) -> tuple[bool, str]:
    """(True, "gone") once namespace ``name`` no longer exists, else (False, its phase): a
    ``waiting.wait_for`` probe."""
    try:
        found = core.read_namespace(name)
    except client.ApiException as exc:
        if exc.status == 404:
            return True, "gone"
        raise
    return False, str(found.status.phase)


def default_kubeconfig(environ: Mapping[str, str], home: Path) -> tuple[Path | None, str]:
    """The kubeconfig kubectl would use when none is given, and where it came from:
    ``$KUBECONFIG`` (one file; several are refused, naming the fix), else
    ``~/.kube/config`` if it exists; (None, "") when there is neither."""
    if value := environ.get("KUBECONFIG", ""):
        files = [part for part in value.split(os.pathsep) if part]
        if len(files) > 1:
            raise errors.ConfigError(f"$KUBECONFIG names {len(files)} files ({value}); zoneproof "
                                     "tests one cluster: pass --kubeconfig FILE, or set "
                                     "KUBECONFIG to one file")
        return Path(files[0]).expanduser(), "$KUBECONFIG"
    default = home / ".kube" / "config"
    return (default, "~/.kube/config") if default.is_file() else (None, "")
