"""The one Kubernetes client factory."""

from __future__ import annotations

from pathlib import Path

from kubernetes import client, config

__all__ = ["api_client"]


def api_client(kubeconfig: Path | None = None, *, context: str | None = None) -> client.ApiClient:
    """An ApiClient for ``kubeconfig`` (None: $KUBECONFIG / ~/.kube/config, or in-cluster)."""
    if kubeconfig is None:
        try:
            return config.new_client_from_config(context=context)
        except config.ConfigException:
            config.load_incluster_config()
            return client.ApiClient()
    return config.new_client_from_config(config_file=str(kubeconfig), context=context)
