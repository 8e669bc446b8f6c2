"""The one place where upstream versions are pinned."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BINARIES", "HOST_TOOLS", "KIND_UPSTREAM_IMAGES", "PINS", "Pins", "project_of"]


@dataclass(frozen=True, slots=True)
class Pins:
    """Versions of every upstream project zoneproof builds or runs."""

    kubernetes: str = "v1.37.2"
    #: The etcd that kubernetes v1.37.2 names in build/dependencies.yaml.
    etcd: str = "v3.7.0"
    kwok: str = "v0.8.0"
    #: Newest sigs.k8s.io/kind on the Go module proxy; its default node image is v1.37.0.
    kind: str = "v0.33.0"
    #: The CoreDNS that kubeadm v1.37.2 names (cmd/kubeadm/app/constants CoreDNSVersion).
    coredns: str = "v1.14.6"
    #: The only github.com/rancher/local-path-provisioner version the module proxy serves.
    local_path_provisioner: str = "v0.0.30"
    #: The pause tag kubeadm v1.37.2 names (PauseVersion); built from gobuild/pause.
    pause: str = "3.10.2"
    #: The envoy tag kind's HA load balancer runs (KIND_UPSTREAM_IMAGES["loadbalancer"]);
    #: offline, zoneproof's gobuild/tcplb stands in under that name.
    tcplb: str = "v1.36.2"
    #: Allure 3 report generator from npm (no Java): reports' HTML.
    allure: str = "3.18.0"
    #: The linearizability checker (github.com/anishathalye/porcupine, newest on the module
    #: proxy), built into zoneproof's gobuild/porcupine command ``porcupine-check``.
    porcupine: str = "v1.3.1"
    #: The GitHub Actions workflow linter (github.com/rhysd/actionlint, newest on the module
    #: proxy): the test suite checks .github/workflows with it. A tool, not in any image.
    actionlint: str = "v1.7.12"
    #: Shopify's TCP proxy that adds latency, bandwidth limits and timeouts to the links
    #: between a zoned local bed's zones (the kernel here has no netem); from its Go module.
    toxiproxy: str = "v2.12.0"
    #: The HTTP load generator (github.com/rakyll/hey, the only version the module proxy
    #: serves) that ``zoneproof bench webhook`` drives the webhook with. A host tool.
    hey: str = "v0.1.5"
    #: zoneproof's own fixed-answer TLS server (gobuild/webhook-ceiling, standard library
    #: only): the webhook bench's ceiling. Rebuilt when its source changes (source digest).
    webhook_ceiling: str = "v1"

    def version_of(self, project: str) -> str:
        """The pinned version of ``project`` (``kubernetes``, ``etcd``, ``kind``, …).

        ``kubernetes-node`` (kubelet, kubeadm, kubectl, kube-proxy) shares the Kubernetes pin.
        """
        attr = "kubernetes" if project == "kubernetes-node" else project.replace("-", "_")
        version: str = getattr(self, attr)
        return version


PINS = Pins()

#: Binary name → upstream project that provides it.
BINARIES: dict[str, str] = {
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "etcd": "etcd",
    "kwok": "kwok",
    "kind": "kind",
    # the node image's binaries (kind backend)
    "kubelet": "kubernetes-node",
    "kubeadm": "kubernetes-node",
    "kubectl": "kubernetes-node",
    "kube-proxy": "kubernetes-node",
    "coredns": "coredns",
    "local-path-provisioner": "local-path-provisioner",
    "pause": "pause",
    "tcplb": "tcplb",
    "porcupine-check": "porcupine",
    "actionlint": "actionlint",
    "toxiproxy-server": "toxiproxy",
    "hey": "hey",
    "webhook-ceiling": "webhook-ceiling",
}

#: Pins of tools that run on the host only (never in the kind node image): they do not
#: change the node image's recipe hash.
HOST_TOOLS = frozenset({"actionlint", "toxiproxy", "hey", "webhook-ceiling"})

#: Images that kind ``PINS.kind`` itself names (pkg/build/nodeimage, pkg/cluster/internal/
#: loadbalancer); the offline node image replaces them, see ``zoneproof.binaries.nodeimage``.
KIND_UPSTREAM_IMAGES: dict[str, str] = {
    "node": "kindest/node:v1.37.0",
    "base": "docker.io/kindest/base:v20260820-69b56db7",
    "kindnetd": "docker.io/kindest/kindnetd:v20260820-69b56db7",
    "local-path-provisioner": "docker.io/kindest/local-path-provisioner:v20260820-69b56db7",
    "local-path-helper": "docker.io/kindest/local-path-helper:v20260131-7181c60a",
    "loadbalancer": "docker.io/envoyproxy/envoy:v1.36.2",
}


def project_of(binary: str) -> str:
    """The upstream project that builds ``binary``."""
    return BINARIES[binary]
